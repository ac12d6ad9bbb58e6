// The checkpointer's thread (db/checkpointer.sqlite.ts): its own connection to the SQLite file runs the WAL
// checkpoints, so copying the WAL back into the database and the fsyncs that go with it do not run
// on the event loop that serves requests.
//
// Every intervalMs a PASSIVE checkpoint copies what no open read still needs; it takes no lock a
// reader or writer waits on. It never makes the WAL start over, though: that needs a moment when
// every frame is copied, and under steady writes new frames land while it copies, so the file would
// grow without end. Once the WAL is past restartFrames, this thread asks the serving thread to hold
// its background writers ("pause": the lifecycle pass, outbox delivery; requests go on), and once
// they are held (answer "held": the serving thread is one thread, so no background write is under
// way when it answers) and a PASSIVE checkpoint finds little left (it took at most DRAINED_MS) or
// DRAIN_LIMIT_MS has passed, runs a RESTART checkpoint: it holds the write lock while it copies that little and waits for reads
// of old frames, and the next writer starts the WAL from its beginning. Then "resume".
//
// Messages in: { path, idlePriority, intervalMs, restartFrames } to start; "held"; "stop" to close the connection (answered
// "closed"; the serving thread then ends this one).
// Messages out: { idleTid } once the thread runs at idle priority (stats); { checkpoints, walFrames }
// after a checkpoint that copied frames (stats); "pause",
// "resume"; { error } when the connection cannot be opened or a checkpoint fails other than busy.
import { Database } from "bun:sqlite";
import { systemClock } from "../shared/clock";
import { lowerThisThreadPriority } from "../shared/thread-priority";

declare const self: Worker;

/** A PASSIVE checkpoint this short found little to copy: the RESTART after it holds the lock as briefly. */
const DRAINED_MS = 5;
/** How long background writers are held at most before the RESTART runs anyway. */
const DRAIN_LIMIT_MS = 1000;

type Result = { busy: number; log: number; checkpointed: number } | null;

let db: Database | null = null;
let timer: ReturnType<typeof setTimeout> | null = null;
let intervalMs = 200;
let restartFrames = Infinity;
let checkpoints = 0;
let lastCopied = -1;
/** When background writers were asked to pause (null: not paused), and whether they are held now. */
let pausedAt: number | null = null;
let held = false;

const checkpoint = (mode: "PASSIVE" | "RESTART") => db!.query(`PRAGMA wal_checkpoint(${mode})`).get() as Result;

function note(r: Result) {
  // `log` is the WAL's length in frames and `checkpointed` how many of them are in the database
  // now; both go back to 0 when a writer starts the WAL over.
  if (r && r.checkpointed > 0 && r.checkpointed !== lastCopied) {
    checkpoints++;
    postMessage({ checkpoints, walFrames: r.log });
  }
  lastCopied = r?.checkpointed ?? -1;
}

function resume() {
  if (pausedAt === null) return;
  pausedAt = null;
  held = false;
  postMessage("resume");
}

function tick(): void {
  timer = null;
  if (!db) return;
  let again = false;
  try {
    const t0 = systemClock.monotonicMs();
    const r = checkpoint("PASSIVE");
    const took = systemClock.monotonicMs() - t0;
    note(r);
    if (r && r.busy === 0 && r.log >= restartFrames) {
      if (pausedAt === null) {
        pausedAt = systemClock.monotonicMs();
        postMessage("pause");
        again = true;
      } else if (held && (took <= DRAINED_MS || systemClock.monotonicMs() - pausedAt >= DRAIN_LIMIT_MS)) {
        note(checkpoint("RESTART"));
        resume();
      } else again = true;
    } else resume();
  } catch (e) {
    // Another connection's checkpoint is running, or the RESTART waited past busy_timeout: writers
    // go on, and the next tick tries again.
    resume();
    const code = (e as { code?: string }).code ?? "";
    if (!code.startsWith("SQLITE_BUSY") && !code.startsWith("SQLITE_LOCKED")) postMessage({ error: (e as Error).message });
  }
  timer = setTimeout(tick, again ? 0 : intervalMs);
}

self.onmessage = (event: MessageEvent) => {
  const msg = event.data as { path: string; idlePriority: boolean; intervalMs: number; restartFrames: number } | "held" | "stop";
  if (msg === "held") {
    held = pausedAt !== null;
    return;
  }
  if (msg === "stop") {
    if (timer) clearTimeout(timer);
    timer = null;
    try {
      db?.close();
    } finally {
      db = null;
      postMessage("closed");
    }
    return;
  }
  try {
    // Copying the WAL runs on the CPU that requests leave (shared/thread-priority.ts); when the
    // thread cannot be moved it copies at normal priority.
    if (msg.idlePriority) {
      const outcome = lowerThisThreadPriority();
      if (outcome.lowered) postMessage({ idleTid: outcome.tid });
    }
    db = new Database(msg.path, { readwrite: true, create: false });
    // A checkpoint syncs the WAL before copying and the database after, whatever this says; NORMAL
    // is the serving connection's level (db/client.ts).
    db.exec("PRAGMA synchronous = NORMAL");
    // PASSIVE never waits; RESTART waits here (not on the serving thread) for the write lock and
    // for reads of old frames to end.
    db.exec("PRAGMA busy_timeout = 1000");
    intervalMs = msg.intervalMs;
    restartFrames = msg.restartFrames;
    tick();
  } catch (e) {
    postMessage({ error: (e as Error).message });
  }
};
