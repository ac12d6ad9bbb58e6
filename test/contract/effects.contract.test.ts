// writeEffects (SQLite) and writeEffectsPg (PostgreSQL), the one writer of a change's side effects:
// the audit row and the outbox rows (events, emails) go in with the change's transaction and leave
// with it when the transaction throws — on its own and through a repository method.
import { afterEach, expect, test } from "bun:test";
import { immediate } from "../../src/db/client";
import { event, type Effects } from "../../src/modules/outbox/effects";
import { writeEffects } from "../../src/modules/outbox/write.sqlite";
import { writeEffectsPg } from "../../src/modules/outbox/write.pg";
import { SYSTEM_ACTOR } from "../../src/shared/actor";
import { forEachEngine, type Opened } from "./harness";
import { auditRows, countRows, outboxRows } from "./inspect";
import { repoFor } from "./repos";
import { seedCatalog, SEED_TIME } from "./seed";

const AT = new Date("2026-11-22T10:00:00.000Z");

const effects: Effects = {
  audit: { actor: SYSTEM_ACTOR, action: "license.revoke", entityType: "license", entityId: "lic-1", productId: "prod-1", changes: { status: "revoked" }, at: AT },
  events: [
    event("license.revoked", AT, {
      license_id: "lic-1",
      product_id: "prod-1",
      plan_id: "plan-1",
      status: "revoked",
      valid_until: null,
      support_until: "2027-01-01T00:00:00.000Z",
      previous_status: "active",
    }),
    event("activation.deleted", AT, {
      activation_id: "act-1",
      license_id: "lic-1",
      product_id: "prod-1",
      identifier: "dev-1",
      identifier_type: "device",
      reason: "removed",
    }),
  ],
  emails: [{ template: "license_revoked", to: "owner@example.com", data: { license_id: "lic-1" }, at: AT }],
};

/** Runs `write` in one transaction of the engine, then throws `fail` if given (rolling it back). */
async function inTransaction(o: Opened, e: Effects, fail?: Error): Promise<void> {
  if (o.sqlite) {
    immediate(o.sqlite, () => {
      writeEffects(o.sqlite!.db, e);
      if (fail) throw fail;
    });
    return;
  }
  await o.pg!.db.transaction(async (tx) => {
    await writeEffectsPg(tx, e);
    if (fail) throw fail;
  });
}

forEachEngine("writeEffects", (engine, open) => {
  let o: Opened;
  afterEach(() => o?.close());

  test("writes the audit row and one pending outbox row per event and email, in order", async () => {
    o = await open();
    await inTransaction(o, effects);
    expect(await auditRows(o)).toEqual([{ action: "license.revoke", entityId: "lic-1", changes: { status: "revoked" } }]);
    const rows = await outboxRows(o);
    expect(rows.map((r) => [r.kind, r.topic, r.status, r.createdAt])).toEqual([
      ["event", "license.revoked", "pending", AT],
      ["event", "activation.deleted", "pending", AT],
      ["email", "license_revoked", "pending", AT],
    ]);
    // Standard Webhooks body for events; template, recipient and values for emails.
    expect(rows[0]!.payload).toEqual({ type: "license.revoked", timestamp: "2026-11-22T10:00:00.000Z", data: effects.events![0]!.data });
    expect(rows[1]!.payload).toEqual({ type: "activation.deleted", timestamp: "2026-11-22T10:00:00.000Z", data: effects.events![1]!.data });
    expect(rows[2]!.payload).toEqual({ template: "license_revoked", to: "owner@example.com", data: { license_id: "lic-1" } });
  });

  test("audit only, events only, nothing: each part is optional", async () => {
    o = await open();
    await inTransaction(o, {});
    expect(await auditRows(o)).toEqual([]);
    expect(await outboxRows(o)).toEqual([]);
    await inTransaction(o, { audit: effects.audit });
    expect((await auditRows(o)).length).toBe(1);
    expect(await outboxRows(o)).toEqual([]);
    await inTransaction(o, { events: effects.events });
    expect((await auditRows(o)).length).toBe(1);
    expect((await outboxRows(o)).map((r) => r.topic)).toEqual(["license.revoked", "activation.deleted"]);
  });

  test("a transaction that throws after writing takes the audit row and the outbox rows with it", async () => {
    o = await open();
    await expect(inTransaction(o, effects, new Error("after the write"))).rejects.toThrow("after the write");
    expect(await auditRows(o)).toEqual([]);
    expect(await outboxRows(o)).toEqual([]);
  });

  test(`through a repository (${engine}): a failing step after the effects rolls back change, audit and events together`, async () => {
    o = await open();
    const repo = repoFor(o).activations;
    const { license } = await seedCatalog(o);
    const input = { licenseId: license.id, identifier: "dev-1", identifierType: "device" as const, label: null, at: SEED_TIME };
    const withEvent = (): Effects => ({ audit: { ...effects.audit!, entityId: license.id }, events: [effects.events![1]!] });
    // `record` (the Idempotency-Key outcome) runs after the effects are written; its throw undoes all.
    await expect(
      repo.activate(input, () => {}, () => { throw new Error("claim lost"); }, withEvent),
    ).rejects.toThrow("claim lost");
    expect(await countRows(o, "activations", license.id)).toBe(0);
    expect(await auditRows(o)).toEqual([]);
    expect(await outboxRows(o)).toEqual([]);
    // Without the failure the same call commits all three.
    expect((await repo.activate(input, () => {}, undefined, withEvent)).kind).toBe("activated");
    expect(await countRows(o, "activations", license.id)).toBe(1);
    expect((await auditRows(o)).map((r) => r.action)).toEqual(["license.revoke"]);
    expect((await outboxRows(o)).map((r) => r.topic)).toEqual(["activation.deleted"]);
  });
});
