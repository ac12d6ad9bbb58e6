// Linux scheduling policies of this process's threads, read from /proc (man 5 proc: field 41 of
// /proc/[pid]/task/[tid]/stat is the policy; 5 is SCHED_IDLE).
import { readdirSync, readFileSync } from "node:fs";

export const SCHED_IDLE = 5;

/** Thread id → scheduling policy, for every thread of a process (this one by default) now. */
export function threadPolicyMap(pid: number | "self" = "self"): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    } catch {
      continue; // the thread ended meanwhile
    }
    // The command name (field 2) is in parentheses and may hold spaces: fields 3… follow the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    out.set(Number(tid), Number(fields[41 - 3]));
  }
  return out;
}

/** The policies of a process's threads, in no particular order. */
export const threadPolicies = (pid: number) => [...threadPolicyMap(pid).values()];
