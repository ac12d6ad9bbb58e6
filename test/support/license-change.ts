// Test setup that changes a license as the verbs do (modules/licenses/change.ts): one unit of work.
import type { Deps } from "../../src/deps";
import { changeLicense } from "../../src/modules/licenses/change";

export const changeLicenseNow = (deps: Pick<Deps, "db">, ...args: Parameters<typeof changeLicense> extends [unknown, ...infer Rest] ? Rest : never) =>
  deps.db.transaction(({ repos }) => changeLicense(repos, ...args));
