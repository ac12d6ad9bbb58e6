// Background threads (the lifecycle pass, the SQLite checkpointer) yield the CPU to the thread that
// serves requests. On Linux a thread's scheduling policy is its own (sched_setscheduler and
// setpriority with a thread id act on that thread alone: man 7 sched, man 2 setpriority "BUGS"), so
// the thread that calls this moves itself to SCHED_IDLE: it runs on what the serving thread and the
// rest of the machine leave, and a verify that wakes up never waits a scheduler slice behind it.
// Elsewhere (macOS, musl without glibc's gettid, an FFI that cannot load) it does nothing and says so.

/** SCHED_IDLE (linux/sched.h): runs only when nothing else of normal priority wants the CPU. */
const SCHED_IDLE = 5;

export type PriorityOutcome = { lowered: true; tid: number } | { lowered: false; reason: string };

/** Moves the calling thread to the idle scheduling class (Linux). Never throws. */
export function lowerThisThreadPriority(): PriorityOutcome {
  if (process.platform !== "linux") return { lowered: false, reason: `not Linux (${process.platform})` };
  try {
    // Loaded only here: bun:ffi is part of Bun and of the compiled executable.
    const { dlopen, FFIType, ptr } = require("bun:ffi") as typeof import("bun:ffi");
    const libc = dlopen("libc.so.6", {
      gettid: { args: [], returns: FFIType.i32 },
      sched_setscheduler: { args: [FFIType.i32, FFIType.i32, FFIType.ptr], returns: FFIType.i32 },
    });
    try {
      const tid = libc.symbols.gettid();
      // struct sched_param { int sched_priority; } — 0 for SCHED_IDLE.
      const param = new Int32Array(1);
      const rc = libc.symbols.sched_setscheduler(tid, SCHED_IDLE, ptr(param));
      return rc === 0 ? { lowered: true, tid } : { lowered: false, reason: "sched_setscheduler refused" };
    } finally {
      libc.close();
    }
  } catch (e) {
    return { lowered: false, reason: (e as Error).message };
  }
}
