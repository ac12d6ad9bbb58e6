// The compiled executable (scripts/build.ts) runs on its own: embedded migrations, OpenAPI plugin,
// key generation and graceful shutdown all work without the source tree or node_modules beside it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { buildBinary } from "../../scripts/build";
import { freshPgDatabase, pgTestUrl, type ScratchDatabase } from "../support/pg";
import { startSmtpServer } from "../support/smtp";
import { startWebhookReceiver } from "../support/webhook-receiver";
import { removeTempDirs, runKeyward, startKeyward, tempDir } from "./support";
import { SCHED_IDLE, threadPolicies } from "../support/thread-policy";

let binary: string;
beforeAll(() => {
  // Built into a temp dir, then run from another one: nothing beside it but its data directory.
  const built = buildBinary({ outfile: join(tempDir("keyward-build-"), "keyward") });
  binary = join(tempDir("keyward-bin-"), "keyward");
  copyFileSync(built, binary);
}, 300_000); // bun build --compile: minutes on a loaded 2-core machine
afterAll(removeTempDirs);

/** POST run-expiry-checks (202) and poll the run it names until it has finished; its record. */
async function expiryChecks(url: string, key: string): Promise<Record<string, unknown>> {
  const headers = { authorization: `Bearer ${key}` };
  const res = await fetch(`${url}/api/v1/admin/system/run-expiry-checks`, { method: "POST", headers });
  expect(res.status).toBe(202);
  const location = res.headers.get("location")!;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const run = ((await (await fetch(`${url}${location}`, { headers })).json()) as { data: Record<string, unknown> }).data;
    if (run.status !== "running") return run;
    if (Date.now() > deadline) throw new Error("the lifecycle pass is still running after 30 s");
    await Bun.sleep(20);
  }
}

describe("compiled binary", () => {
  test("--help works", () => {
    const r = runKeyward(["--help"], { cmd: [binary] });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("Usage: keyward");
  });

  test("serves health, pubkey and the OpenAPI document, then stops cleanly on SIGTERM", async () => {
    const dataDir = tempDir();
    const running = await startKeyward({ cmd: [binary], env: { DATA_DIR: dataDir } });
    try {
      const health = await fetch(`${running.url}/api/v1/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ success: true, data: { status: "ok", database: "ok" } });

      const pubkey = await fetch(`${running.url}/api/v1/license/pubkey`);
      expect(pubkey.status).toBe(200);
      expect(((await pubkey.json()) as { data: { public_key: string } }).data.public_key).toMatch(/^[0-9a-f]{64}$/);

      const doc = await fetch(`${running.url}/api/v1/openapi.json`);
      expect(doc.status).toBe(200);
      const spec = (await doc.json()) as { openapi: string; paths: Record<string, any> };
      expect(spec.openapi).toStartWith("3.1");
      expect(Object.keys(spec.paths)).toContain("/api/v1/license/pubkey");
      // Generated from the route table at runtime, including our request-body fix-up (http/openapi.ts).
      expect(spec.paths["/api/v1/admin/products"].post.requestBody.content["application/json"].schema.type).toBe("object");
      expect(spec.paths["/api/v1/admin/products"].post.security).toEqual([{ bearerAuth: [] }, { sessionCookie: [] }]);

      const ui = await fetch(`${running.url}/api/v1/docs`);
      expect(ui.status).toBe(200);
      expect(ui.headers.get("content-type")).toContain("text/html");
      expect(ui.headers.get("content-security-policy")).toContain("default-src 'none'");
      // The viewer's files come from inside the executable (nothing lies beside it), byte for byte
      // the pinned swagger-ui-dist package's.
      const refs = [...(await ui.text()).matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!).filter((ref) => !ref.startsWith("data:"));
      expect(refs.length).toBe(3);
      for (const ref of refs) {
        const asset = await fetch(new URL(ref, `${running.url}/api/v1/docs`));
        expect({ ref, status: asset.status }).toEqual({ ref, status: 200 });
        const file = /\/(swagger-ui[^/]*)$/.exec(ref)?.[1];
        if (file) expect({ ref, same: (await asset.text()) === (await Bun.file(require.resolve(`swagger-ui-dist/${file}`)).text()) }).toEqual({ ref, same: true });
      }
    } finally {
      expect(await running.stop("SIGTERM")).toBe(0);
    }
    expect(running.output().stdout).toContain('"msg":"stopped"');
  }, 120_000); // starts the executable: slow on a loaded machine

  test("migrate and api-key create work from the binary; the key authenticates", async () => {
    const dataDir = tempDir();
    expect(runKeyward(["migrate"], { cmd: [binary], env: { DATA_DIR: dataDir } }).exitCode).toBe(0);
    const created = runKeyward(["api-key", "create", "--scopes", "admin"], { cmd: [binary], env: { DATA_DIR: dataDir } });
    expect(created.exitCode).toBe(0);
    const running = await startKeyward({ cmd: [binary], env: { DATA_DIR: dataDir } });
    try {
      const res = await fetch(`${running.url}/api/v1/admin/products`, { headers: { authorization: `Bearer ${created.stdout.trim()}` } });
      expect(res.status).toBe(200);
    } finally {
      expect(await running.stop()).toBe(0);
    }
  }, 120_000);

  // The release build splits what the app loads with import() into chunks of its own, loaded on
  // first use (scripts/build.ts): these parts must load from inside the executable too.
  test("loads its lazily loaded parts from inside itself: SMTP (nodemailer) and webhook delivery (node:http)", async () => {
    const smtp = await startSmtpServer();
    const receiver = startWebhookReceiver();
    const env = {
      DATA_DIR: tempDir(),
      SMTP_URL: smtp.url,
      MAIL_FROM: "Keyward <noreply@keyward.test>",
      WEBHOOK_ALLOW_PRIVATE: "true",
      JOBS: "off",
    };
    const created = runKeyward(["api-key", "create", "--scopes", "admin"], { cmd: [binary], env });
    expect(created.exitCode).toBe(0);
    const running = await startKeyward({ cmd: [binary], env });
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${running.url}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${created.stdout.trim()}`, ...(body ? { "content-type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: (await res.json()) as { data: any } };
    };
    try {
      // A sign-in code for a user: an email in the outbox, sent over SMTP by the deliver-outbox pass.
      expect((await call("POST", "/admin/users", { email: "ops@keyward.test", role: "admin" })).status).toBe(200);
      expect((await call("POST", "/auth/otp/request", { email: "ops@keyward.test" })).status).toBe(200);
      expect((await call("POST", "/admin/system/jobs/deliver-outbox/run")).body.data).toMatchObject({ status: "ok", result: { sent: 1 } });
      expect(smtp.received.map((m) => m.envelope.to)).toEqual([["ops@keyward.test"]]);

      // A webhook.test event, POSTed by the deliver-webhooks pass.
      const endpoint = await call("POST", "/admin/webhooks", { url: receiver.url("/hooks"), events: ["license.*"] });
      expect(endpoint.status).toBe(201);
      expect((await call("POST", `/admin/webhooks/${endpoint.body.data.id}/test`)).status).toBe(202);
      expect((await call("POST", "/admin/system/jobs/deliver-webhooks/run")).body.data).toMatchObject({ status: "ok", error: null });
      expect(receiver.received.map((h) => [h.path, JSON.parse(h.body).type])).toEqual([["/hooks", "webhook.test"]]);
    } finally {
      expect(await running.stop()).toBe(0);
      await smtp.stop();
      await receiver.stop();
    }
  }, 120_000);

  // The SQLite checkpoint thread (src/db/checkpointer.sqlite.ts) is an entry point of its own inside the
  // executable (scripts/build.ts): a thread it could not start would log a warning and fall back.
  test("starts the SQLite checkpoint thread from inside itself: no fallback to automatic checkpoints", async () => {
    const dataDir = tempDir();
    const created = runKeyward(["api-key", "create", "--scopes", "admin"], { cmd: [binary], env: { DATA_DIR: dataDir } });
    expect(created.exitCode).toBe(0);
    const running = await startKeyward({ cmd: [binary], env: { DATA_DIR: dataDir, JOBS: "off", LOG_LEVEL: "debug" } });
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${running.url}/api/v1${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${created.stdout.trim()}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as { data: any } };
    };
    try {
      const product = await post("/admin/products", { name: "WAL", slug: "wal" });
      const plan = await post("/admin/plans", { product_id: product.body.data.id, name: "Pro", license_type: "perpetual", max_activations: 3 });
      expect(plan.status).toBe(201);
      // Each issued license writes tens of WAL pages (the row, its indexes, its audit row): 200 of them
      // take the WAL past the 1,000 pages at which the thread starts; the node looks every second.
      for (let i = 0; i < 200; i++) {
        expect((await post("/admin/licenses", { product_id: product.body.data.id, plan_id: plan.body.data.id, email: `wal${i}@example.com` })).status).toBe(201);
      }
      expect(Bun.file(join(dataDir, "keyward.db-wal")).size).toBeGreaterThan(4096 * 1000);
      await Bun.sleep(2500);
      expect((await fetch(`${running.url}/api/v1/health`)).status).toBe(200);
      // BACKGROUND_PRIORITY=idle (the default): the checkpoint thread is the one thread of the process
      // in SCHED_IDLE (bun:ffi works inside the executable).
      if (process.platform === "linux") expect(threadPolicies(running.proc.pid).filter((p) => p === SCHED_IDLE)).toHaveLength(1);
      // The lifecycle pass's thread, also an entry point of its own (src/jobs/pass-thread.ts).
      expect(await expiryChecks(running.url, created.stdout.trim())).toMatchObject({ status: "ok", result: { scanned: 0 } });
    } finally {
      expect(await running.stop()).toBe(0);
    }
    const out = running.output();
    const threadLines = (out.stdout + out.stderr).split("\n").filter((l) => /checkpoint thread|lifecycle thread/.test(l));
    // No fallback; the lifecycle thread moved itself to idle priority too.
    if (process.platform === "linux") expect(threadLines.map((l) => JSON.parse(l).msg)).toEqual(["the lifecycle thread runs at idle priority"]);
    else expect(threadLines.filter((l) => !l.includes("keeps its priority"))).toEqual([]);
  }, 120_000);

  describe.skipIf(!pgTestUrl())("on PostgreSQL (DATABASE_URL)", () => {
    let database: ScratchDatabase;
    beforeAll(async () => {
      database = await freshPgDatabase("binary");
    });
    afterAll(async () => {
      await database?.drop();
    });

    test("migrates, creates an API key and serves from the PostgreSQL engine it loads on demand", async () => {
      const env = { DATA_DIR: tempDir(), DATABASE_URL: database.url };
      expect(runKeyward(["migrate"], { cmd: [binary], env }).exitCode).toBe(0);
      const created = runKeyward(["api-key", "create", "--scopes", "admin"], { cmd: [binary], env });
      expect(created.exitCode).toBe(0);
      const running = await startKeyward({ cmd: [binary], env });
      try {
        const health = await fetch(`${running.url}/api/v1/health`);
        expect(await health.json()).toEqual({ success: true, data: { status: "ok", database: "ok" } });
        const res = await fetch(`${running.url}/api/v1/admin/products`, {
          method: "POST",
          headers: { authorization: `Bearer ${created.stdout.trim()}`, "content-type": "application/json" },
          body: JSON.stringify({ name: "Binary on PostgreSQL", slug: "binary-pg" }),
        });
        expect(res.status).toBe(201);
        // The lifecycle pass's thread loads the PostgreSQL driver inside the executable too.
        expect(await expiryChecks(running.url, created.stdout.trim())).toMatchObject({ status: "ok", result: { scanned: 0 } });
      } finally {
        expect(await running.stop()).toBe(0);
      }
      const out = running.output();
      expect((out.stdout + out.stderr).split("\n").filter((l) => l.includes("lifecycle thread"))).toEqual([]);
      // The rows are in PostgreSQL, not in a SQLite file in DATA_DIR.
      const sql = (await import("postgres")).default(database.url, { max: 1, onnotice: () => {} });
      try {
        expect(await sql`SELECT slug FROM products`).toEqual([{ slug: "binary-pg" }] as never);
      } finally {
        await sql.end();
      }
    }, 120_000);
  });
});
