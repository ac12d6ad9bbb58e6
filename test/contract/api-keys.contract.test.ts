// ApiKeyRepo on every engine: creation (with or without an audit row), the hash lookup every admin
// request makes, newest-first listing, idempotent revocation, last-used stamps.
import { afterEach, expect, test } from "bun:test";
import type { ApiKeyRecord, ApiKeyRepo } from "../../src/modules/api-keys/repo";
import { newId } from "../../src/shared/ids";
import { forEachEngine, type Opened } from "./harness";
import { SEED_TIME, seedProduct } from "./seed";
import { repoFor } from "./repos";
import { AT, auditActions, audited } from "./rows";
import { withNodes } from "./nodes";

function key(over: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  const id = newId();
  return {
    id,
    name: "CI",
    keyHash: `hash-${id}`,
    keyPrefix: "kw_live_ab12",
    scopes: ["releases:write", "licenses:write"],
    productId: null,
    createdAt: SEED_TIME,
    lastUsedAt: null,
    revokedAt: null,
    ...over,
  };
}

forEachEngine("ApiKeyRepo", (engine, open) => {
  let o: Opened;
  let repo: ApiKeyRepo;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).apiKeys;
  };
  afterEach(() => o?.close());

  test("create (audited or not); find by hash and by id; null for unknown", async () => {
    await setup();
    const product = await seedProduct(o);
    const bootstrap = key({ scopes: ["admin"] });
    const bound = key({ productId: product.id });
    expect(await repo.create(bootstrap, null)).toEqual(bootstrap);
    expect(await repo.create(bound, audited("api_key.create"))).toEqual(bound);
    expect(await repo.findByHash(bound.keyHash)).toEqual(bound);
    expect(await repo.findById(bootstrap.id)).toEqual(bootstrap);
    expect(await repo.findByHash("nope")).toBeNull();
    expect(await repo.findById("nope")).toBeNull();
    expect(await auditActions(o)).toEqual(["api_key.create"]);
  });

  test("list is newest first; equal creation times keep creation order", async () => {
    await setup();
    const older = key({ createdAt: new Date(SEED_TIME.getTime() - 1) });
    const sameTime = [key(), key(), key()];
    const newest = key({ createdAt: AT });
    for (const k of [older, ...sameTime, newest]) await repo.create(k, null);
    expect((await repo.list()).map((k) => k.id)).toEqual([newest, ...sameTime, older].map((k) => k.id));
  });

  test("revoke stamps and audits once; a second revoke returns the key unchanged without audit; null for unknown", async () => {
    await setup();
    const k = key();
    await repo.create(k, null);
    expect(await repo.revoke(k.id, AT, audited("api_key.revoke"))).toEqual({ ...k, revokedAt: AT });
    const later = new Date(AT.getTime() + 60_000);
    expect(await repo.revoke(k.id, later, audited("api_key.revoke"))).toEqual({ ...k, revokedAt: AT });
    expect(await repo.findByHash(k.keyHash)).toEqual({ ...k, revokedAt: AT });
    expect(await repo.revoke("nope", AT, audited("api_key.revoke"))).toBeNull();
    expect(await auditActions(o)).toEqual(["api_key.revoke"]);
  });

  test("touch stamps lastUsedAt with millisecond precision; unknown ids are ignored", async () => {
    await setup();
    const k = key();
    await repo.create(k, null);
    const at = new Date("2026-11-22T10:00:00.123Z");
    await repo.touch(k.id, at);
    await repo.touch("nope", at);
    expect(await repo.findById(k.id)).toEqual({ ...k, lastUsedAt: at });
  });

  if (engine === "postgres") {
    test("concurrent revokes from three nodes: exactly one revokes and audits, all return its stamp", async () => {
      await setup();
      const k = key();
      await repo.create(k, null);
      const results = await withNodes(o, 3, (nodes) =>
        Promise.all(Array.from({ length: 12 }, (_, i) => nodes[i % 3]!.apiKeys.revoke(k.id, new Date(AT.getTime() + i), audited("api_key.revoke")))),
      );
      const stamps = new Set(results.map((r) => r!.revokedAt!.getTime()));
      expect(stamps.size).toBe(1);
      expect((await repo.findById(k.id))!.revokedAt!.getTime()).toBe([...stamps][0]!);
      expect(await auditActions(o)).toEqual(["api_key.revoke"]);
    });
  }
});
