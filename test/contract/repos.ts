import { createSqliteRepos } from "../../src/container";
import { createPgRepos } from "../../src/repos.pg";
import type { Repos } from "../../src/deps";
import type { Opened } from "./harness";

/** The engine's repository set over an opened database. */
export function repoFor(o: Opened): Repos {
  return o.sqlite ? createSqliteRepos(o.sqlite) : (createPgRepos(o.pg!) as Repos);
}
