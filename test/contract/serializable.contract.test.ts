// serializable() (src/db/serializable.pg.ts): re-runs a transaction PostgreSQL aborted for a
// serialization conflict, rolls back each failed attempt, and passes every other error straight through.
import { afterEach, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { serializable } from "../../src/db/serializable.pg";
import { openEngine, type Opened } from "./harness";
import { pgTestUrl } from "../support/pg";

describe.skipIf(!pgTestUrl())("serializable() [postgres]", () => {
  let o: Opened;
  afterEach(() => o?.close());

  const conflict = () => Object.assign(new Error("could not serialize access"), { code: "40001" });
  const settingsCount = async () => (await o.pg!.sql`SELECT count(*)::int AS n FROM settings`)[0]!.n as number;

  test("retries a serialization failure, rolling back the failed attempts, until it commits", async () => {
    o = await openEngine("postgres", "serializable");
    let calls = 0;
    const out = await serializable(o.pg!.db, async (tx) => {
      calls += 1;
      await tx.execute(sql`INSERT INTO settings (key, value, updated_at) VALUES (${`k${calls}`}, '1'::jsonb, now())`);
      if (calls < 3) throw { cause: conflict() };
      return "done";
    });
    expect(out).toBe("done");
    expect(calls).toBe(3);
    expect(await settingsCount()).toBe(1);
  });

  test("gives up after the given attempts; other errors are not retried", async () => {
    o = await openEngine("postgres", "serializable");
    let calls = 0;
    const gaveUp = await serializable(
      o.pg!.db,
      async () => {
        calls += 1;
        throw conflict();
      },
      3,
    ).catch((e) => e);
    expect(calls).toBe(3);
    expect(gaveUp.code).toBe("40001");
    calls = 0;
    const other = await serializable(o.pg!.db, async () => {
      calls += 1;
      throw new Error("refused");
    }).catch((e) => e);
    expect(calls).toBe(1);
    expect(other.message).toBe("refused");
  });
});
