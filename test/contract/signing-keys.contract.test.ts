// SigningKeyRepo on every engine, through the activation's unit of work (keys/service.ts
// activateKey): one active key per (purpose, product), rotation retires the old key, reactivating a
// known kid revives its row, and on PostgreSQL nodes racing to activate (first start, rotation)
// leave exactly one active key and agree on it.
import { afterEach, expect, test } from "bun:test";
import type { SigningKeyPurpose, SigningKeyRecord, SigningKeyRepo } from "../../src/modules/keys/repo";
import { newId } from "../../src/shared/ids";
import { forEachEngine, type Opened } from "./harness";
import { SEED_TIME, seedProduct } from "./seed";
import { repoFor } from "./repos";
import { AT, auditActions, audited, readRows } from "./rows";
import { unitOf, withPgUnits, type Unit } from "./unit";
import { activateKey } from "../../src/modules/keys/service";
import type { Effects } from "../../src/modules/outbox/effects";

type ActivateOpts = { onlyIfNoneActive: boolean; effects?: Effects };
const activateIn = (unit: Unit, next: SigningKeyRecord, opts: ActivateOpts) => unit((r) => activateKey(r, next, opts));

function keyRecord(purpose: SigningKeyPurpose, productId: string | null, over: Partial<SigningKeyRecord> = {}): SigningKeyRecord {
  const id = newId();
  return {
    id,
    kid: `kid-${id.slice(-12)}`,
    purpose,
    productId,
    publicKeyHex: "ab".repeat(32),
    privateKeyEncrypted: `sealed-${id}`,
    keyNumHex: purpose === "release" ? "0123456789abcdef" : null,
    active: true,
    createdAt: SEED_TIME,
    retiredAt: null,
    ...over,
  };
}

forEachEngine("SigningKeyRepo", (engine, open) => {
  let o: Opened;
  let repo: SigningKeyRepo;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).signingKeys;
  };
  const activate = (next: SigningKeyRecord, opts: ActivateOpts) => activateIn(unitOf(o), next, opts);
  afterEach(() => o?.close());

  test("first activation inserts the active key; onlyIfNoneActive then returns it instead", async () => {
    await setup();
    const first = keyRecord("token", null);
    expect(await activate(first, { onlyIfNoneActive: true, effects: audited("signing_key.create") })).toEqual(first);
    const second = keyRecord("token", null, { createdAt: AT });
    expect(await activate(second, { onlyIfNoneActive: true, effects: audited("signing_key.create") })).toEqual(first);
    expect(await repo.findActive("token", null)).toEqual(first);
    expect(await repo.findByKid(first.kid)).toEqual(first);
    expect(await repo.findByKid(second.kid)).toBeNull();
    expect(await auditActions(o)).toEqual(["signing_key.create"]);
  });

  test("rotation retires the active key at the new key's creation time; the same kid again is a no-op", async () => {
    await setup();
    const old = keyRecord("token", null);
    await activate(old, { onlyIfNoneActive: false });
    const next = keyRecord("token", null, { createdAt: AT });
    expect(await activate(next, { onlyIfNoneActive: false, effects: audited("signing_key.rotate") })).toEqual(next);
    const retired = { ...old, active: false, retiredAt: AT };
    expect(await repo.findByKid(old.kid)).toEqual(retired);
    expect(await repo.findActive("token", null)).toEqual(next);
    const again = keyRecord("token", null, { kid: next.kid, createdAt: new Date(AT.getTime() + 5) });
    expect(await activate(again, { onlyIfNoneActive: false, effects: audited("signing_key.rotate") })).toEqual(next);
    expect(await repo.list("token", null)).toEqual([next, retired]);
    expect(await auditActions(o)).toEqual(["signing_key.rotate"]);
  });

  test("activating a retired kid revives its row (no duplicate) and retires the current one", async () => {
    await setup();
    const a = keyRecord("token", null);
    const b = keyRecord("token", null, { createdAt: AT });
    await activate(a, { onlyIfNoneActive: false });
    await activate(b, { onlyIfNoneActive: false });
    const back = new Date(AT.getTime() + 1000);
    const revived = await activate(keyRecord("token", null, { kid: a.kid, createdAt: back }), {
      onlyIfNoneActive: false,
      effects: audited("signing_key.rotate"),
    });
    expect(revived).toEqual({ ...a, active: true, retiredAt: null });
    expect(await repo.findActive("token", null)).toEqual(revived);
    expect(await repo.findByKid(b.kid)).toEqual({ ...b, active: false, retiredAt: back });
    expect((await repo.list("token", null)).length).toBe(2);
    expect(await auditActions(o)).toEqual(["signing_key.rotate"]);
  });

  test("scopes are separate: token keys, and release keys per product; list is newest first", async () => {
    await setup();
    const p1 = await seedProduct(o);
    const p2 = await seedProduct(o);
    const token = keyRecord("token", null);
    const r1 = keyRecord("release", p1.id);
    const r2old = keyRecord("release", p2.id, { createdAt: new Date(SEED_TIME.getTime() - 1) });
    const r2 = keyRecord("release", p2.id);
    const r2same = keyRecord("release", p2.id, { createdAt: SEED_TIME });
    for (const k of [token, r1, r2old, r2]) await activate(k, { onlyIfNoneActive: true });
    expect(await repo.findActive("token", null)).toEqual(token);
    expect(await repo.findActive("release", p1.id)).toEqual(r1);
    expect(await repo.findActive("release", p2.id)).toEqual(r2old);
    expect(await repo.findActive("release", null)).toBeNull();
    expect(await repo.findActive("token", p1.id)).toBeNull();
    await activate(r2, { onlyIfNoneActive: false });
    await activate(r2same, { onlyIfNoneActive: false });
    // Equal creation times list in creation order.
    expect((await repo.list("release", p2.id)).map((k) => [k.kid, k.active])).toEqual([
      [r2.kid, false],
      [r2same.kid, true],
      [r2old.kid, false],
    ]);
    expect(await repo.list("release", null)).toEqual([]);
    expect(await repo.findByKid("nope")).toBeNull();
  });

  if (engine === "postgres") {
    const activeRows = async (purpose: SigningKeyPurpose, productId: string | null) =>
      (await readRows(o, "signingKeys")).filter((r) => r.purpose === purpose && r.productId === productId && r.active);

    test("first-start race: nine activations from three nodes agree on one key, and only it is stored", async () => {
      await setup();
      const results = await withPgUnits(o, 3, (units) =>
        Promise.all(
          Array.from({ length: 9 }, (_, i) => activateIn(units[i % 3]!, keyRecord("token", null), { onlyIfNoneActive: true, effects: audited("signing_key.create") })),
        ),
      );
      const winners = new Set(results.map((r) => r.kid));
      expect(winners.size).toBe(1);
      const rows = await readRows(o, "signingKeys");
      expect(rows.map((r) => r.kid)).toEqual([...winners]);
      expect(rows[0]!.active).toBe(true);
      expect(await auditActions(o)).toEqual(["signing_key.create"]);
    });

    test("rotation race: nine rotations from three nodes leave exactly one active release key", async () => {
      await setup();
      const product = await seedProduct(o);
      await activate(keyRecord("release", product.id), { onlyIfNoneActive: false });
      const results = await withPgUnits(o, 3, (units) =>
        Promise.all(
          Array.from({ length: 9 }, (_, i) =>
            activateIn(units[i % 3]!, keyRecord("release", product.id, { createdAt: new Date(AT.getTime() + i) }), {
              onlyIfNoneActive: false,
              effects: audited("signing_key.rotate"),
            }),
          ),
        ),
      );
      const active = await activeRows("release", product.id);
      expect(active.length).toBe(1);
      expect(results.map((r) => r.kid)).toContain(active[0]!.kid);
      const all = await readRows(o, "signingKeys");
      expect(all.length).toBe(10);
      expect(all.filter((r) => !r.active && r.retiredAt === null)).toEqual([]);
      expect((await auditActions(o)).length).toBe(9);
    });

    test("same-kid race (every node configured with one seed): one row, every node gets it", async () => {
      await setup();
      const kid = "kid-configured";
      const results = await withPgUnits(o, 3, (units) =>
        Promise.all(Array.from({ length: 9 }, (_, i) => activateIn(units[i % 3]!, keyRecord("token", null, { kid }), { onlyIfNoneActive: true }))),
      );
      expect(new Set(results.map((r) => r.id)).size).toBe(1);
      expect((await readRows(o, "signingKeys")).length).toBe(1);
      expect((await activeRows("token", null)).length).toBe(1);
    });
  }
});
