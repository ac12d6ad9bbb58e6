// AuditRepo on every engine: filters, newest-first order with the id in byte order as tie-breaker,
// and keyset pagination whose cursors are the same strings on both engines.
import { afterEach, expect, test } from "bun:test";
import type { AuditRecord, AuditRepo } from "../../src/modules/audit/repo";
import { encodeCursor } from "../../src/db/cursor";
import { forEachEngine, type Opened } from "./harness";
import { repoFor } from "./repos";
import { AT, insertInto, rejection } from "./rows";

const t = (ms: number) => new Date(AT.getTime() + ms);

function record(id: string, createdAt: Date, over: Partial<AuditRecord> = {}): AuditRecord {
  return {
    id,
    actorType: "api_key",
    actorId: "key-1",
    action: "license.update",
    entityType: "license",
    entityId: "lic-1",
    productId: "prod-1",
    changes: { status: { from: "active", to: "suspended" } },
    ip: "198.51.100.7",
    requestId: `req-${id}`,
    createdAt,
    ...over,
  };
}

// Newest first; equal instants by id, descending, in byte order ("a-b" > "Zed" as bytes).
const ROWS: AuditRecord[] = [
  record("m", t(3000), { action: "product.update", entityType: "product", entityId: "prod-2", productId: "prod-2", actorId: null, actorType: "system" }),
  record("aa", t(2000)),
  record("a-b", t(2000), { changes: null, ip: null, requestId: null }),
  record("Zed", t(2000), { actorId: "key-2", entityId: "lic-2" }),
  record("b", t(1000), { action: "license.create", changes: { list: [1, "two", null], nested: { ok: true } } }),
  record("z", t(0), { action: "settings.update", entityType: "settings", entityId: "settings", productId: null }),
];

forEachEngine("AuditRepo", (engine, open) => {
  let o: Opened;
  let repo: AuditRepo;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).audit;
    // Inserted out of order, so the order of the results is the query's.
    await insertInto(o, "auditLog", [ROWS[3], ROWS[0], ROWS[5], ROWS[2], ROWS[4], ROWS[1]] as unknown as Record<string, unknown>[]);
  };
  afterEach(() => o?.close());

  const ids = (items: AuditRecord[]) => items.map((r) => r.id);

  test("lists everything newest first, equal instants by id in byte order, records intact", async () => {
    await setup();
    const page = await repo.list({ limit: 50 });
    expect(page).toEqual({ items: ROWS, nextCursor: null });
  });

  test("each filter narrows the list; since and until are inclusive", async () => {
    await setup();
    expect(ids((await repo.list({ limit: 50, entityType: "license" })).items)).toEqual(["aa", "a-b", "Zed", "b"]);
    expect(ids((await repo.list({ limit: 50, entityId: "lic-2" })).items)).toEqual(["Zed"]);
    expect(ids((await repo.list({ limit: 50, action: "license.create" })).items)).toEqual(["b"]);
    expect(ids((await repo.list({ limit: 50, actorId: "key-2" })).items)).toEqual(["Zed"]);
    expect(ids((await repo.list({ limit: 50, productId: "prod-1" })).items)).toEqual(["aa", "a-b", "Zed", "b"]);
    expect(ids((await repo.list({ limit: 50, since: t(1000), until: t(2000) })).items)).toEqual(["aa", "a-b", "Zed", "b"]);
    expect(ids((await repo.list({ limit: 50, since: t(1001), until: t(1999) })).items)).toEqual([]);
    expect(ids((await repo.list({ limit: 50, entityType: "license", actorId: "key-1", since: t(1500) })).items)).toEqual(["aa", "a-b"]);
    expect(await repo.list({ limit: 50, action: "nope" })).toEqual({ items: [], nextCursor: null });
  });

  test("pages through in the same order with the same cursor strings on every engine", async () => {
    await setup();
    const first = await repo.list({ limit: 2 });
    expect(ids(first.items)).toEqual(["m", "aa"]);
    expect(first.nextCursor).toBe(encodeCursor({ t: t(2000).getTime(), id: "aa" }));
    expect(Buffer.from(first.nextCursor!, "base64url").toString()).toBe('{"t":1795341602000,"id":"aa"}');
    const second = await repo.list({ limit: 2, cursor: first.nextCursor! });
    expect(ids(second.items)).toEqual(["a-b", "Zed"]);
    const third = await repo.list({ limit: 2, cursor: second.nextCursor! });
    expect(third).toEqual({ items: [ROWS[4]!, ROWS[5]!], nextCursor: null });
    const filtered = await repo.list({ limit: 1, entityType: "license", cursor: encodeCursor({ t: t(2000).getTime(), id: "a-b" }) });
    expect(ids(filtered.items)).toEqual(["Zed"]);
    expect(filtered.nextCursor).toBe(encodeCursor({ t: t(2000).getTime(), id: "Zed" }));
  });

  test("an invalid cursor is a VALIDATION_ERROR", async () => {
    await setup();
    expect((await rejection(repo.list({ limit: 2, cursor: "not-a-cursor" }))).code).toBe("VALIDATION_ERROR");
  });
});
