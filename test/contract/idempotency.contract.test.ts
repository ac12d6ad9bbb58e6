// IdempotencyRepo on every engine: claims, takeovers of stale claims, replays, release and pruning;
// on PostgreSQL also concurrent claims from three pools (three nodes on one database).
import { afterEach, expect, test } from "bun:test";
import { openPostgres, type PgHandle } from "../../src/db/pg";
import { createIdempotencyRepoPg } from "../../src/modules/idempotency/repo.pg";
import type { ClaimResult, IdempotencyRepo, IdempotencyScope } from "../../src/modules/idempotency/repo";
import { pgTestUrl } from "../support/pg";
import { forEachEngine, type Opened } from "./harness";
import { repoFor } from "./repos";

const MIN = 60_000;
const t0 = new Date("2026-11-21T08:00:00.000Z");
const after = (ms: number) => new Date(t0.getTime() + ms);
/** A claim at `at` with a 24 h window and a 5 min stale limit, as the service makes it. */
const claimAt = (repo: IdempotencyRepo, s: IdempotencyScope, body: string, at: Date) =>
  repo.claim(s, body, at, new Date(at.getTime() - 24 * 60 * MIN), new Date(at.getTime() - 5 * MIN));

let seq = 0;
const scope = (): IdempotencyScope => ({ key: `key-${++seq}`, route: "/v1/license/activate", scope: "hash-abc" });

/** `n` independent pools on the opened PostgreSQL database: like `n` nodes. */
async function nodes(o: Opened, n: number): Promise<PgHandle[]> {
  const [row] = await o.pg!.sql<{ name: string }[]>`SELECT current_database() AS name`;
  const url = new URL(pgTestUrl()!);
  url.pathname = `/${row!.name}`;
  return Array.from({ length: n }, () => openPostgres(url.toString(), { max: 4 }));
}

forEachEngine("IdempotencyRepo", (engine, open) => {
  let o: Opened;
  let repo: IdempotencyRepo;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).idempotency;
  };
  afterEach(() => o?.close());

  test("first claim wins; the same body is in flight, another body conflicts; the stored outcome replays", async () => {
    await setup();
    const s = scope();
    expect(await claimAt(repo, s, "body", t0)).toEqual({ kind: "claimed" });
    expect(await claimAt(repo, s, "body", after(1000))).toEqual({ kind: "in_flight" });
    expect(await claimAt(repo, s, "other", after(1000))).toEqual({ kind: "conflict" });
    // The same key on another route or for another license is another claim.
    expect(await claimAt(repo, { ...s, route: "/v1/license/deactivate" }, "body", t0)).toEqual({ kind: "claimed" });
    expect(await claimAt(repo, { ...s, scope: "hash-def" }, "body", t0)).toEqual({ kind: "claimed" });

    // A completion naming another claim instant does not match.
    expect(await repo.complete({ scope: s, claimedAt: after(1), status: 201, responseSealed: "x", at: after(2000) })).toBe(false);
    expect(await repo.complete({ scope: s, claimedAt: t0, status: 201, responseSealed: "sealed-201", at: after(2000) })).toBe(true);
    expect(await repo.complete({ scope: s, claimedAt: t0, status: 500, responseSealed: "again", at: after(3000) })).toBe(false);
    expect(await claimAt(repo, s, "body", after(4000))).toEqual({ kind: "replay", status: 201, responseSealed: "sealed-201" });
    expect(await claimAt(repo, s, "other", after(4000))).toEqual({ kind: "conflict" });
    // A done row is never stale: long after, still a replay.
    expect(await claimAt(repo, s, "body", after(60 * MIN))).toEqual({ kind: "replay", status: 201, responseSealed: "sealed-201" });
  });

  test("a stale in-flight claim is taken over: the new claimer completes, the old one no longer can", async () => {
    await setup();
    const s = scope();
    expect(await claimAt(repo, s, "body", t0)).toEqual({ kind: "claimed" });
    // Exactly at the stale limit it is still in flight; after it, taken over.
    expect(await claimAt(repo, s, "body", after(5 * MIN))).toEqual({ kind: "in_flight" });
    const takeover = after(5 * MIN + 1);
    expect(await claimAt(repo, s, "body", takeover)).toEqual({ kind: "claimed" });
    expect(await claimAt(repo, s, "body", after(5 * MIN + 2))).toEqual({ kind: "in_flight" });
    // A stale claim with another body is still a conflict, not a takeover.
    expect(await claimAt(repo, s, "other", after(11 * MIN))).toEqual({ kind: "conflict" });
    expect(await repo.complete({ scope: s, claimedAt: t0, status: 200, responseSealed: "old", at: takeover })).toBe(false);
    await repo.release(s, t0); // the original claimer's release does not free the new claim
    expect(await claimAt(repo, s, "body", after(5 * MIN + 3))).toEqual({ kind: "in_flight" });
    expect(await repo.complete({ scope: s, claimedAt: takeover, status: 200, responseSealed: "new", at: takeover })).toBe(true);
    expect(await claimAt(repo, s, "body", after(6 * MIN))).toEqual({ kind: "replay", status: 200, responseSealed: "new" });
  });

  test("release frees only its own in-flight claim; a completed row stays", async () => {
    await setup();
    const s = scope();
    await claimAt(repo, s, "body", t0);
    await repo.release(s, after(1));
    expect(await claimAt(repo, s, "other", after(1000))).toEqual({ kind: "conflict" });
    await repo.release(s, t0);
    expect(await claimAt(repo, s, "other", after(2000))).toEqual({ kind: "claimed" });
    expect(await repo.complete({ scope: s, claimedAt: after(2000), status: 409, responseSealed: "r", at: after(2000) })).toBe(true);
    await repo.release(s, after(2000));
    expect(await claimAt(repo, s, "other", after(3000))).toEqual({ kind: "replay", status: 409, responseSealed: "r" });
  });

  test("a claim first deletes rows older than the window, its own scope's included", async () => {
    await setup();
    const old = scope();
    const mine = scope();
    await claimAt(repo, old, "body", t0);
    await claimAt(repo, mine, "body", t0);
    expect(await repo.complete({ scope: mine, claimedAt: t0, status: 201, responseSealed: "s", at: t0 })).toBe(true);
    const day = 24 * 60 * MIN;
    // One ms inside the window: both rows are still there.
    expect(await claimAt(repo, mine, "changed", after(day))).toEqual({ kind: "conflict" });
    // Past the window: this scope's done row is replaced by a fresh claim with the new body …
    const later = after(day + 1);
    expect(await claimAt(repo, mine, "changed", later)).toEqual({ kind: "claimed" });
    expect(await repo.complete({ scope: mine, claimedAt: t0, status: 201, responseSealed: "s", at: later })).toBe(false);
    expect(await repo.complete({ scope: mine, claimedAt: later, status: 202, responseSealed: "t", at: later })).toBe(true);
    expect(await claimAt(repo, mine, "changed", after(day + 2))).toEqual({ kind: "replay", status: 202, responseSealed: "t" });
    // … and the other scope's expired row was deleted by that claim (nothing left to prune).
    expect(await repo.prune(after(day), 1000)).toBe(0);
    expect(await claimAt(repo, old, "another", after(day + 3))).toEqual({ kind: "claimed" });
  });

  test("prune deletes rows created before the instant and counts them", async () => {
    await setup();
    const [a, b, c] = [scope(), scope(), scope()];
    const farPast = new Date(0);
    const claim = (s: IdempotencyScope, at: Date) => repo.claim(s, "body", at, farPast, farPast);
    await claim(a, t0);
    await claim(b, after(1000));
    await claim(c, after(2000));
    await repo.complete({ scope: b, claimedAt: after(1000), status: 200, responseSealed: "s", at: after(1500) });
    expect(await repo.prune(after(1000), 1000)).toBe(1);
    // One batch deletes at most its limit.
    expect(await repo.prune(after(2001), 1)).toBe(1);
    expect(await repo.prune(after(2001), 1000)).toBe(1);
    expect(await repo.prune(after(9999), 1000)).toBe(0);
    expect(await claim(b, after(3000))).toEqual({ kind: "claimed" });
  });

  if (engine === "postgres") {
    test("50 concurrent claims of one key from three nodes: exactly one is claimed", async () => {
      await setup();
      const pools = await nodes(o, 3);
      try {
        const repos = pools.map(createIdempotencyRepoPg);
        const s = scope();
        const results = await Promise.all(Array.from({ length: 50 }, (_, i) => claimAt(repos[i % 3]!, s, "body", after(i))));
        const kinds = results.map((r: ClaimResult) => r.kind);
        expect(kinds.filter((k) => k === "claimed")).toHaveLength(1);
        expect(kinds.filter((k) => k === "in_flight")).toHaveLength(49);
      } finally {
        await Promise.all(pools.map((p) => p.close()));
      }
    });

    test("30 concurrent takeovers of one stale claim from three nodes: exactly one takes it", async () => {
      await setup();
      const pools = await nodes(o, 3);
      try {
        const repos = pools.map(createIdempotencyRepoPg);
        const s = scope();
        expect(await claimAt(repo, s, "body", t0)).toEqual({ kind: "claimed" });
        const at = (i: number) => after(10 * MIN + i);
        const results = await Promise.all(Array.from({ length: 30 }, (_, i) => claimAt(repos[i % 3]!, s, "body", at(i))));
        const winners = results.flatMap((r, i) => (r.kind === "claimed" ? [i] : []));
        expect(winners).toHaveLength(1);
        expect(results.filter((r) => r.kind === "in_flight")).toHaveLength(29);
        // The winner's claim instant is the one on the row.
        expect(await repo.complete({ scope: s, claimedAt: at(winners[0]!), status: 200, responseSealed: "w", at: at(99) })).toBe(true);
      } finally {
        await Promise.all(pools.map((p) => p.close()));
      }
    });
  }
});
