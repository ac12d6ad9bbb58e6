// retryConflicts (src/db/serializable.pg.ts): runs a statement again when PostgreSQL aborted it for a
// serialization conflict or a deadlock (autocommitWrite's "retry"), and passes every other error
// straight through.
import { describe, expect, test } from "bun:test";
import { retryConflicts } from "../../src/db/serializable.pg";

describe("retryConflicts()", () => {
  const conflict = () => Object.assign(new Error("could not serialize access"), { code: "40001" });

  test("retries a serialization failure (also when wrapped as a cause) until it succeeds", async () => {
    let calls = 0;
    const out = await retryConflicts(async () => {
      calls += 1;
      if (calls === 1) throw { cause: conflict() };
      if (calls === 2) throw Object.assign(new Error("deadlock detected"), { code: "40P01" });
      return "done";
    }, 20);
    expect(out).toBe("done");
    expect(calls).toBe(3);
  });

  test("gives up after the given attempts; other errors are not retried", async () => {
    let calls = 0;
    const gaveUp = await retryConflicts(async () => {
      calls += 1;
      throw conflict();
    }, 3).catch((e) => e);
    expect(calls).toBe(3);
    expect(gaveUp.code).toBe("40001");
    calls = 0;
    const other = await retryConflicts(async () => {
      calls += 1;
      throw new Error("refused");
    }, 20).catch((e) => e);
    expect(calls).toBe(1);
    expect(other.message).toBe("refused");
  });
});
