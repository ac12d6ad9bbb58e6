// DataStore.transaction (Deps.db.transaction) on each engine: commit, rollback of every repository
// write in it, and no other request reading its uncommitted rows.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { engines } from "./harness";
import { createTestApp, type TestApp } from "../support/app";
import { freshPgDatabase } from "../support/pg";
import { newId } from "../../src/shared/ids";
import { SYSTEM_ACTOR } from "../../src/shared/actor";
import type { Product } from "../../src/modules/products/repo";
import type { Effects } from "../../src/modules/outbox/effects";
import type { Tx } from "../../src/db/store";
import type { Repos } from "../../src/deps";
import { applySettingsChange } from "../../src/modules/settings/service";
import { activateKey } from "../../src/modules/keys/service";
import { TransactionScopeError } from "../../src/db/transaction-scope";

for (const engine of engines()) {
  describe(`DataStore.transaction [${engine}]`, () => {
    let t: TestApp;
    let drop: (() => Promise<void>) | null = null;
    beforeAll(async () => {
      const pg = engine === "postgres" ? await freshPgDatabase("transaction") : null;
      drop = pg ? pg.drop : null;
      t = await createTestApp({ env: pg ? { DATABASE_URL: pg.url } : {} });
      expect(t.engine).toBe(engine);
    });
    afterAll(async () => {
      await t?.close();
      await drop?.();
    });

    const product = (): Product => {
      const id = newId();
      const at = t.clock.now();
      return { id, name: `P ${id.slice(-6)}`, slug: `p-${id.slice(-12)}`, distribution: "open", minimumSupportedVersion: null, minimumSupportedMessage: null, releaseGeneration: 0, createdAt: at, updatedAt: at };
    };
    const audit = (p: Product): Effects => ({ audit: { actor: SYSTEM_ACTOR, action: "product.create", entityType: "product", entityId: p.id, productId: p.id, changes: null, at: t.clock.now() } });
    const auditRows = async (id: string) => (await t.exec("SELECT id FROM audit_log WHERE entity_id = $1", [id])).length;
    // A write and its audit row, as the verbs make them (products/service.ts).
    const createAudited = async (repos: Repos, p: Product) => {
      const out = await repos.products.create(p);
      await repos.outbox.writeEffects(audit(p));
      return out;
    };
    const updateAudited = async (repos: Repos, p: Product, patch: { name: string }, at: Date) => {
      const out = await repos.products.update(p.id, patch, at);
      await repos.outbox.writeEffects(audit(p));
      return out;
    };

    test("commits what its repositories wrote when the callback resolves", async () => {
      const a = product();
      const b = product();
      const out = await t.deps.db.transaction(async ({ repos: r }) => {
        await createAudited(r, a);
        await createAudited(r, b);
        return "done";
      });
      expect(out).toBe("done");
      expect((await t.deps.repos.products.findById(a.id))?.slug).toBe(a.slug);
      expect((await t.deps.repos.products.findById(b.id))?.slug).toBe(b.slug);
      expect(await auditRows(a.id)).toBe(1);
    });

    test("rolls everything back when the callback throws, audit rows and every repository write included", async () => {
      const a = product();
      const failure = new Error("refused halfway");
      const err = await t.deps.db
        .transaction(async ({ repos: r }) => {
          await createAudited(r, a);
          // update() writes in this unit: undone with it.
          await updateAudited(r, a, { name: "Renamed" }, t.clock.now());
          throw failure;
        })
        .catch((e: unknown) => e);
      expect(err).toBe(failure);
      expect(await t.deps.repos.products.findById(a.id)).toBeNull();
      expect(await auditRows(a.id)).toBe(0);
    });

    test("no request reads its uncommitted rows while it is open", async () => {
      const a = product();
      let release!: () => void;
      const latch = new Promise<void>((r) => (release = r));
      let committed = false;
      const tx = t.deps.db.transaction(async ({ repos: r }) => {
        await createAudited(r, a);
        await latch;
      }).then(() => (committed = true));
      await Bun.sleep(20); // the transaction has written its row and waits
      const state: { readAfterCommit: boolean | null } = { readAfterCommit: null };
      const read = t.deps.repos.products.findById(a.id).then((p) => {
        state.readAfterCommit = committed;
        return p;
      });
      await Bun.sleep(50);
      release();
      await tx;
      const seen = await read;
      if (engine === "sqlite") {
        // One connection: the read waits for the commit, then sees the row.
        expect({ readAfterCommit: state.readAfterCommit, found: seen !== null }).toEqual({ readAfterCommit: true, found: true });
      } else {
        // Another connection, READ COMMITTED: the read does not wait and does not see the row.
        expect({ readAfterCommit: state.readAfterCommit, found: seen !== null }).toEqual({ readAfterCommit: false, found: false });
      }
      expect(await t.deps.repos.products.findById(a.id)).not.toBeNull();
    });

    // Issue 25 point 6: Deps' repositories wait for the transaction on SQLite (the callback never
    // returned) and use another connection on PostgreSQL. Called from inside the callback they now
    // refuse at once; the short timeouts make a hang fail instead of stall.
    /** Writes `a` through the transaction, then runs `reach` inside it: the error it ends with; `a` rolled back. */
    const refusal = async (a: Product, reach: (tx: Tx) => Promise<unknown>): Promise<Error> => {
      const err = await t.deps.db
        .transaction(async (tx) => {
          await createAudited(tx.repos, a);
          return await reach(tx);
        })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TransactionScopeError);
      expect(await t.deps.repos.products.findById(a.id)).toBeNull();
      return err as Error;
    };

    test("a Deps repository called inside the callback refuses at once, and the transaction rolls back", async () => {
      const b = product();
      const err = await refusal(product(), () => createAudited(t.deps.repos, b)); // the wrong repositories
      expect(err.message).toContain("deps.repos.products.create called inside deps.db.transaction: use the transaction's repositories");
      expect(await t.deps.repos.products.findById(b.id)).toBeNull();
    }, 3000);

    test("a Deps repository called from a later step of the callback (a closure over deps) refuses too", async () => {
      const a = product();
      const readOutside = () => t.deps.repos.products.findById(a.id);
      const err = await refusal(a, async () => {
        await Bun.sleep(1);
        return await Promise.all([readOutside()]);
      });
      expect(err.message).toContain("deps.repos.products.findById called inside deps.db.transaction");
    }, 3000);

    test("a transaction opened inside the callback refuses at once instead of deadlocking", async () => {
      const a = product();
      const err = await refusal(a, () => t.deps.db.transaction((inner) => inner.repos.products.findById(a.id)));
      expect(err.message).toContain("deps.db.transaction called inside deps.db.transaction: transactions do not nest");
    }, 3000);

    test("other requests keep using Deps' repositories while a transaction is open, and afterwards the callback's leftovers may too", async () => {
      const a = product();
      const b = product();
      let release!: () => void;
      const latch = new Promise<void>((r) => (release = r));
      let later: (() => Promise<Product | null>) | null = null;
      const tx = t.deps.db.transaction(async ({ repos: r }) => {
        await createAudited(r, a);
        // Work the callback leaves behind runs in its async context after the commit: no longer refused.
        later = () => t.deps.repos.products.findById(a.id);
        await latch;
      });
      await Bun.sleep(20);
      // Another async context (another request): it waits on SQLite, runs on another connection on PostgreSQL.
      const other = createAudited(t.deps.repos, b);
      await Bun.sleep(20);
      release();
      await tx;
      expect((await other).id).toBe(b.id);
      expect((await t.deps.repos.products.findById(b.id))?.slug).toBe(b.slug);
      expect((await later!())?.id).toBe(a.id);
    }, 5000);

    if (engine === "sqlite") {
      // One writer per file: transactions queue, so a read-modify-write inside one loses no update.
      test("transactions run one after the other: ten read-modify-writes keep all ten changes", async () => {
        const a = product();
        await createAudited(t.deps.repos, a);
        await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            t.deps.db.transaction(async ({ repos: r }) => {
              const current = (await r.products.findById(a.id))!;
              await Bun.sleep(1); // yield inside the transaction: nothing else may interleave
              await updateAudited(r, a, { name: `${current.name}+${i}` }, t.clock.now());
            }),
          ),
        );
        expect(((await t.deps.repos.products.findById(a.id))!.name.match(/\+/g) ?? []).length).toBe(10);
      });
    }

    test("a settings change inside it commits with it", async () => {
      const stored = await t.deps.db.transaction(({ repos: r }) =>
        applySettingsChange(r, { vendor_name: "Inside" }, t.clock.now(), () => ({
          audit: { actor: SYSTEM_ACTOR, action: "settings.update", entityType: "settings", entityId: null, productId: null, changes: null, at: t.clock.now() },
        })),
      );
      expect(stored.vendor_name).toBe("Inside");
      expect((await t.deps.repos.settings.all()).vendor_name).toBe("Inside");
    });

    test("a signing-key activation inside it commits with it", async () => {
      const id = newId();
      const key = { id, kid: `kid-${id.slice(-12)}`, purpose: "release" as const, productId: null, publicKeyHex: "ab".repeat(32), privateKeyEncrypted: `sealed-${id}`, keyNumHex: "0123456789abcdef", active: true, createdAt: t.clock.now(), retiredAt: null };
      const active = await t.deps.db.transaction(({ repos: r }) => activateKey(r, key, { onlyIfNoneActive: false }));
      expect(active.kid).toBe(key.kid);
      expect((await t.deps.repos.signingKeys.findByKid(key.kid))!.active).toBe(true);
    });
  });
}
