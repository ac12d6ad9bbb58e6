// SQLite with several processes on one file: a request whose only write is a best-effort timestamp
// (an API key's last use, a session's slide, an activation's last seen) does not wait for another
// process's write lock. bun:sqlite waits for a lock synchronously, so waiting would freeze every
// request of the process for the busy timeout (5 s) and then fail this one with 503.
import { afterAll, beforeAll, expect } from "bun:test";
import { createTestApp, sqliteOnlyTest, type TestApp } from "../../support/app";
import { SESSION_TOUCH_INTERVAL_MS } from "../../../src/modules/sessions/service";
import { whileWriterElsewhere } from "../../support/writer-elsewhere";

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** Runs `body` while a second connection (another process, as far as SQLite can tell) holds the write lock. */
const whileLocked = <T>(body: () => Promise<T>): Promise<T> => whileWriterElsewhere({ sqliteFile: t.sqlite.sqlite.filename }, body);

const timed = async <T>(body: () => Promise<T>): Promise<{ value: T; ms: number }> => {
  const started = Date.now();
  const value = await body();
  return { value, ms: Date.now() - started };
};

sqliteOnlyTest("an admin request whose API key is due a last-used note answers at once; the note is made on a later request", async () => {
  const key = await t.apiKey(["admin"]);
  expect((await t.request("GET", "/api/v1/admin/products", { key })).status).toBe(200);
  const lastUsed = async () => (await t.exec<{ last_used_at: number }>("SELECT last_used_at FROM api_keys WHERE last_used_at IS NOT NULL ORDER BY last_used_at DESC LIMIT 1"))[0]!.last_used_at;
  const first = await lastUsed();
  t.clock.advance(2 * 60_000);
  const { value: res, ms } = await timed(() => whileLocked(() => t.request("GET", "/api/v1/admin/products", { key })));
  expect(res.status).toBe(200);
  expect(ms).toBeLessThan(1000);
  expect(await lastUsed()).toBe(first);
  expect((await t.request("GET", "/api/v1/admin/products", { key })).status).toBe(200);
  expect(await lastUsed()).toBe(t.clock.nowMs());
});

sqliteOnlyTest("a session due to slide its idle expiry answers at once; it slides on its next request", async () => {
  const cookie = await t.signIn("writer-lock@example.com");
  const idle = async () => (await t.exec<{ idle_expires_at: number }>("SELECT idle_expires_at FROM sessions ORDER BY created_at DESC LIMIT 1"))[0]!.idle_expires_at;
  const before = await idle();
  t.clock.advance(SESSION_TOUCH_INTERVAL_MS);
  const { value: res, ms } = await timed(() => whileLocked(() => t.request("GET", "/api/v1/auth/me", { cookie })));
  expect(res.status).toBe(200);
  expect(ms).toBeLessThan(1000);
  expect(await idle()).toBe(before);
  expect((await t.request("GET", "/api/v1/auth/me", { cookie })).status).toBe(200);
  expect(await idle()).toBeGreaterThan(before);
});
