// Graceful shutdown of the real process: SIGTERM while an upload is still arriving. The slow request
// is a genuinely slow client (a raw socket that sends half the body, then waits), so src/ needs no
// test hook.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, statSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { eventually, removeTempDirs, runKeyward, startKeyward, tempDir } from "./support";

afterAll(removeTempDirs);

function openSocket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => resolve(s));
    s.once("error", reject);
  });
}

/** Resolves with the error code of a connection attempt, or "connected". */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve("connected");
    });
    s.once("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

function collect(socket: Socket): Promise<string> {
  let data = "";
  socket.on("data", (d) => (data += d.toString("utf8")));
  return new Promise((resolve) => socket.once("close", () => resolve(data)));
}

function adminKey(dataDir: string): string {
  const r = runKeyward(["api-key", "create", "--scopes", "admin"], { env: { DATA_DIR: dataDir } });
  expect(r.exitCode).toBe(0);
  return r.stdout.trim();
}

describe("graceful shutdown", () => {
  test("SIGTERM with an upload in flight: it completes, new connections are refused, exit 0, database closed cleanly", async () => {
    const dataDir = tempDir();
    const key = adminKey(dataDir);
    // A grace period far longer than the test: only the request finishing can let the process go.
    const running = await startKeyward({ env: { DATA_DIR: dataDir, SHUTDOWN_GRACE_MS: "600000" } });

    const body = JSON.stringify({ name: "Uploaded during shutdown", slug: "in-flight", minimum_supported_message: "x".repeat(1500) });
    const half = Math.floor(body.length / 2);
    const upload = await openSocket(running.port);
    const response = collect(upload);
    upload.write(
      "POST /api/v1/admin/products HTTP/1.1\r\n" +
        `Host: 127.0.0.1:${running.port}\r\n` +
        `Authorization: Bearer ${key}\r\n` +
        "Content-Type: application/json\r\n" +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        "Connection: close\r\n\r\n" +
        body.slice(0, half),
    );
    // The server has answered a request that arrived after ours, so it has read our headers.
    expect((await fetch(`${running.url}/api/v1/health`)).status).toBe(200);

    running.proc.kill("SIGTERM");
    await running.waitForLog('"msg":"shutting down"');
    await eventually(async () => (await tryConnect(running.port)) === "ECONNREFUSED", "new connections refused");
    expect(running.proc.exitCode).toBeNull(); // still serving the upload

    // The rest of the body, without half-closing the socket: Bun drops the response of a connection
    // whose client has sent its FIN before the answer was ready (seen with a plain Bun.serve too, no
    // shutdown involved), and the request may still be waiting for the console area to load.
    // `Connection: close` makes the server close the socket once it has answered.
    upload.write(body.slice(half));
    const raw = await response;
    expect(raw.slice(0, 12)).toBe("HTTP/1.1 201");
    const json = JSON.parse(raw.slice(raw.indexOf("\r\n\r\n") + 4)) as { success: boolean; data: { slug: string } };
    expect(json.success).toBe(true);
    expect(json.data.slug).toBe("in-flight");

    expect(await running.exited).toBe(0);
    expect(running.output().stdout).toContain('"msg":"stopped"');

    // Closed cleanly: the WAL was checkpointed into the main file (no -wal left with content).
    const wal = join(dataDir, "keyward.db-wal");
    expect(existsSync(wal) ? statSync(wal).size : 0).toBe(0);
    const db = new Database(join(dataDir, "keyward.db"));
    try {
      expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
      expect(db.query("SELECT name FROM products WHERE slug = 'in-flight'").get()).toEqual({ name: "Uploaded during shutdown" });
    } finally {
      db.close();
    }
  });

  test("SIGINT stops an idle server with exit 0", async () => {
    const running = await startKeyward({ env: { DATA_DIR: tempDir() } });
    expect(await running.stop("SIGINT")).toBe(0);
  });

  test("a stalled request cannot hold the shutdown past SHUTDOWN_GRACE_MS", async () => {
    const dataDir = tempDir();
    const key = adminKey(dataDir);
    const running = await startKeyward({ env: { DATA_DIR: dataDir, SHUTDOWN_GRACE_MS: "200" } });
    const stalled = await openSocket(running.port);
    const response = collect(stalled);
    stalled.write(
      "POST /api/v1/admin/products HTTP/1.1\r\n" +
        `Host: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":`,
    );
    expect((await fetch(`${running.url}/api/v1/health`)).status).toBe(200);
    // The body never completes; the process still exits cleanly and drops the connection.
    expect(await running.stop("SIGTERM")).toBe(0);
    expect(await response).not.toContain("HTTP/1.1 201");
    const db = new Database(join(dataDir, "keyward.db"));
    try {
      expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    } finally {
      db.close();
    }
  });
});
