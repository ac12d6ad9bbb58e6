// ApiKeyRepo on every engine: creation (with or without an audit row), the hash lookup every admin
// request makes, newest-first listing, idempotent revocation, last-used stamps.
import { afterEach, expect, test } from "bun:test";
import type { ApiKeyRecord, ApiKeyRepo } from "../../src/modules/api-keys/repo";
import { newId } from "../../src/shared/ids";
import { forEachEngine, type Opened } from "./harness";
import { SEED_TIME, seedProduct } from "./seed";
import { repoFor } from "./repos";
import { AT, auditActions } from "./rows";
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

  test("create; find by hash and by id; null for unknown; the repository audits nothing", async () => {
    await setup();
    const product = await seedProduct(o);
    const bootstrap = key({ scopes: ["admin"] });
    const bound = key({ productId: product.id });
    expect(await repo.create(bootstrap)).toEqual(bootstrap);
    expect(await repo.create(bound)).toEqual(bound);
    expect(await repo.findByHash(bound.keyHash)).toEqual(bound);
    expect(await repo.findById(bootstrap.id)).toEqual(bootstrap);
    expect(await repo.findByHash("nope")).toBeNull();
    expect(await repo.findById("nope")).toBeNull();
    expect(await auditActions(o)).toEqual([]);
  });

  test("list is newest first; equal creation times keep creation order", async () => {
    await setup();
    const older = key({ createdAt: new Date(SEED_TIME.getTime() - 1) });
    const sameTime = [key(), key(), key()];
    const newest = key({ createdAt: AT });
    for (const k of [older, ...sameTime, newest]) await repo.create(k);
    expect((await repo.list()).map((k) => k.id)).toEqual([newest, ...sameTime, older].map((k) => k.id));
  });

  test("revoke stamps once: the first call revokes, a second returns the key unchanged; null for unknown", async () => {
    await setup();
    const k = key();
    await repo.create(k);
    expect(await repo.revoke(k.id, AT)).toEqual({ key: { ...k, revokedAt: AT }, revoked: true });
    const later = new Date(AT.getTime() + 60_000);
    expect(await repo.revoke(k.id, later)).toEqual({ key: { ...k, revokedAt: AT }, revoked: false });
    expect(await repo.findByHash(k.keyHash)).toEqual({ ...k, revokedAt: AT });
    expect(await repo.revoke("nope", AT)).toBeNull();
  });

  test("touch stamps lastUsedAt with millisecond precision; unknown ids are ignored", async () => {
    await setup();
    const k = key();
    await repo.create(k);
    const at = new Date("2026-11-22T10:00:00.123Z");
    await repo.touch(k.id, at);
    await repo.touch("nope", at);
    expect(await repo.findById(k.id)).toEqual({ ...k, lastUsedAt: at });
  });

  if (engine === "postgres") {
    test("concurrent revokes from three nodes: exactly one revokes, all return its stamp", async () => {
      await setup();
      const k = key();
      await repo.create(k);
      const results = await withNodes(o, 3, (nodes) => Promise.all(Array.from({ length: 12 }, (_, i) => nodes[i % 3]!.apiKeys.revoke(k.id, new Date(AT.getTime() + i)))));
      expect(results.filter((r) => r!.revoked)).toHaveLength(1);
      const stamps = new Set(results.map((r) => r!.key.revokedAt!.getTime()));
      expect(stamps.size).toBe(1);
      expect((await repo.findById(k.id))!.revokedAt!.getTime()).toBe([...stamps][0]!);
    });
  }
});
