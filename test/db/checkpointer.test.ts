// WAL checkpoints on a thread of their own (src/db/checkpointer.sqlite.ts, checkpoint-worker.sqlite.ts): a serving
// connection never checkpoints inside its commits, yet the WAL file stays bounded under a steady
// stream of writes, nothing written is lost, and when the thread cannot run the connection goes back
// to SQLite's automatic checkpoints. Real files; the thresholds are shrunk so a test writes MBs, not GBs.
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { openDatabase, type DbHandle } from "../../src/db/client";
import { AUTOCHECKPOINT_PAGES } from "../../src/db/checkpointer.sqlite";
import { createLogger } from "../../src/shared/logger";
import { SCHED_IDLE, threadPolicyMap } from "../support/thread-policy";

const dirs: string[] = [];
const handles: DbHandle[] = [];
afterEach(async () => {
  for (const h of handles.splice(0)) await h.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function fresh(opts: Parameters<typeof openDatabase>[1]) {
  const dir = mkdtempSync(join(tmpdir(), "keyward-ckpt-"));
  dirs.push(dir);
  const path = join(dir, "k.db");
  const h = openDatabase(path, opts);
  handles.push(h);
  h.sqlite.exec("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v BLOB NOT NULL)");
  return { h, path };
}

const autocheckpoint = (sqlite: Database) => (sqlite.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint;
const walSize = (path: string) => statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
const tick = () => new Promise((r) => setTimeout(r, 1));

describe("the checkpoint thread", () => {
  test("a one-shot connection keeps SQLite's automatic checkpoints", () => {
    const { h } = fresh({});
    expect(h.checkpointer).toBeNull();
    expect(autocheckpoint(h.sqlite)).toBe(AUTOCHECKPOINT_PAGES);
  });

  test("a serving connection never checkpoints in a commit; the thread keeps a steadily written WAL bounded, and every row is kept", async () => {
    // 64 KB threshold (16 pages): ~40 MB written in 1,000 commits of 40 KB with a yield between them,
    // as a background writer writes (it awaits backgroundWrite() first). Without checkpoints, or with
    // the thread's PASSIVE checkpoints alone (the WAL never starts over while the writer keeps adding
    // frames), the WAL file would hold all 40 MB.
    const { h, path } = fresh({ checkpointThread: { thresholdBytes: 64 * 1024, pollMs: 5, intervalMs: 5 } });
    expect(autocheckpoint(h.sqlite)).toBe(0);
    const insert = h.sqlite.prepare("INSERT INTO t (v) VALUES (?)");
    const blob = new Uint8Array(40 * 1024);
    let maxWal = 0;
    let held = 0;
    for (let i = 0; i < 1000; i++) {
      const gate = h.checkpointer!.backgroundWrite();
      if (gate) {
        held++;
        await gate;
      }
      h.sqlite.transaction(() => insert.run(blob))();
      maxWal = Math.max(maxWal, walSize(path));
      await tick();
    }
    const stats = h.checkpointer!.stats();
    expect(stats.running).toBe(true);
    expect(stats.checkpoints).toBeGreaterThan(0);
    expect(stats.pauses).toBeGreaterThan(0);
    expect(held).toBeGreaterThan(0);
    expect(maxWal).toBeLessThan(8 * 1024 * 1024);
    await h.close();
    const reopened = new Database(path, { readonly: true });
    expect((reopened.query("SELECT count(*) AS n FROM t").get() as { n: number }).n).toBe(1000);
    expect((reopened.query("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check).toBe("ok");
    reopened.close();
  });

  test.if(process.platform === "linux")("with idlePriority its thread runs in SCHED_IDLE and says which it is; without, it keeps its priority", async () => {
    for (const idlePriority of [false, true]) {
      const { h } = fresh({ checkpointThread: { idlePriority, thresholdBytes: 0, pollMs: 5, intervalMs: 5 } });
      const insert = h.sqlite.prepare("INSERT INTO t (v) VALUES (?)");
      // A write past the threshold starts the thread; it lowers itself before opening its connection.
      for (let i = 0; i < 200 && h.checkpointer!.stats().checkpoints === 0; i++) {
        insert.run(new Uint8Array(8192));
        await Bun.sleep(10);
      }
      const { checkpoints, idleTid } = h.checkpointer!.stats();
      expect(checkpoints).toBeGreaterThan(0);
      if (idlePriority) {
        expect(idleTid).not.toBeNull();
        expect(threadPolicyMap().get(idleTid!)).toBe(SCHED_IDLE);
      } else expect(idleTid).toBeNull();
      await h.close();
      handles.splice(handles.indexOf(h), 1);
    }
  });

  test("a thread that cannot open the database: back to automatic checkpoints, with a warning", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger("warn", (line) => lines.push(JSON.parse(line) as Record<string, unknown>));
    const dir = mkdtempSync(join(tmpdir(), "keyward-ckpt-"));
    dirs.push(dir);
    const path = join(dir, "gone.db");
    const h = openDatabase(path, { checkpointThread: { logger, thresholdBytes: 0, pollMs: 5, intervalMs: 5 } });
    handles.push(h);
    expect(autocheckpoint(h.sqlite)).toBe(0);
    // The thread opens the file by name and never creates it: with the name gone, it cannot.
    unlinkSync(path);
    for (let i = 0; i < 200 && autocheckpoint(h.sqlite) === 0; i++) await Bun.sleep(10);
    expect(autocheckpoint(h.sqlite)).toBe(AUTOCHECKPOINT_PAGES);
    expect(h.checkpointer!.stats().running).toBe(false);
    expect(lines.map((l) => l.msg)).toContain("sqlite checkpoint thread stopped; commits checkpoint the WAL themselves again");
  });
});
