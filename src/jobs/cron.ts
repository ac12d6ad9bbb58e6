// The job passes' schedules: 5-field cron expressions in UTC, and one timer per process that fires
// them on whole minutes.
//
// Why not Bun.cron: the first Bun.cron (or Bun.cron.parse) call of a process costs 13–25 ms of CPU and
// about 5 MB of resident memory (measured with bun 1.4.5: a script that only parses "7 * * * *"
// goes from 0.1 ms / 0.7 MB to 13.4 ms / 4.6 MB), and every `keyward serve` paid both, against a
// start-up budget of 50 ms and 60 MB (docs/performance.md). Our schedules are fixed, UTC and simple,
// so this file reads the standard syntax itself: per field `*`, a number, `a-b`, `*/n`, `a-b/n`,
// and comma lists of those; day of week 0–7 (0 and 7 are Sunday). When both day of month and day of
// week are restricted, a day matching either matches (the usual cron rule).
import { MINUTE, systemClock, type Clock } from "../shared/clock";

export interface CronSpec {
  minute: ReadonlySet<number>;
  hour: ReadonlySet<number>;
  dayOfMonth: ReadonlySet<number>;
  month: ReadonlySet<number>;
  dayOfWeek: ReadonlySet<number>;
  /** Whether day of month / day of week were `*` (see the OR rule above). */
  anyDayOfMonth: boolean;
  anyDayOfWeek: boolean;
}

const FIELDS = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12 },
  { name: "day of week", min: 0, max: 7 },
] as const;

function parseField(text: string, field: (typeof FIELDS)[number], schedule: string): Set<number> {
  const out = new Set<number>();
  const bad = () => new Error(`invalid cron schedule "${schedule}": ${field.name} "${text}"`);
  const num = (s: string) => {
    if (!/^\d{1,2}$/.test(s)) throw bad();
    const n = Number(s);
    if (n < field.min || n > field.max) throw bad();
    return n;
  };
  for (const part of text.split(",")) {
    const m = /^(\*|\d+(?:-\d+)?)(?:\/(\d+))?$/.exec(part);
    if (!m) throw bad();
    const [range, step] = [m[1]!, m[2]];
    let lo: number = field.min;
    let hi: number = field.max;
    if (range !== "*") {
      const [a, b] = range.split("-");
      lo = num(a!);
      hi = b === undefined ? (step === undefined ? lo : field.max) : num(b);
      if (hi < lo) throw bad();
    }
    const by = step === undefined ? 1 : Number(step);
    if (!Number.isInteger(by) || by < 1) throw bad();
    for (let v = lo; v <= hi; v += by) out.add(field.name === "day of week" && v === 7 ? 0 : v);
  }
  return out;
}

export function parseCron(schedule: string): CronSpec {
  const parts = schedule.trim().split(/\s+/);
  if (parts.length !== 5) throw new Error(`invalid cron schedule "${schedule}": 5 fields expected`);
  const [minute, hour, dayOfMonth, month, dayOfWeek] = parts.map((p, i) => parseField(p, FIELDS[i]!, schedule)) as [Set<number>, Set<number>, Set<number>, Set<number>, Set<number>];
  return { minute, hour, dayOfMonth, month, dayOfWeek, anyDayOfMonth: parts[2] === "*", anyDayOfWeek: parts[4] === "*" };
}

/** Whether the minute that contains `ms` (UTC) matches. */
export function cronMatches(spec: CronSpec, ms: number): boolean {
  const d = new Date(ms);
  if (!spec.minute.has(d.getUTCMinutes()) || !spec.hour.has(d.getUTCHours()) || !spec.month.has(d.getUTCMonth() + 1)) return false;
  const dom = spec.dayOfMonth.has(d.getUTCDate());
  const dow = spec.dayOfWeek.has(d.getUTCDay());
  if (spec.anyDayOfMonth || spec.anyDayOfWeek) return (spec.anyDayOfMonth || dom) && (spec.anyDayOfWeek || dow);
  return dom || dow;
}

/** How far back slotOf looks for the latest match (a weekly schedule fits). */
const MAX_LOOKBACK_MINUTES = 8 * 24 * 60;

/**
 * The slot a firing at `now` belongs to: the latest minute at or before `now` that matches `schedule`
 * (UTC). A firing delayed past its minute still names its own slot, so a late node does not run a
 * slot of its own beside the one the others ran.
 */
export function slotOf(schedule: string | CronSpec, now: Date): Date {
  const spec = typeof schedule === "string" ? parseCron(schedule) : schedule;
  const minute = Math.floor(now.getTime() / MINUTE) * MINUTE;
  for (let i = 0, t = minute; i < MAX_LOOKBACK_MINUTES; i++, t -= MINUTE) if (cronMatches(spec, t)) return new Date(t);
  return new Date(minute);
}

export interface CronHandle {
  stop(): unknown;
}
/** Runs `handler` at every minute matching `schedule`; tests pass a fake to fire schedules by hand. */
export type CronScheduler = (schedule: string, handler: () => Promise<void>) => CronHandle;

/**
 * The process's cron: one timer, armed for the next whole minute while any schedule is registered,
 * that fires the handlers whose schedule matches that minute. A handler's rejection is its own to
 * handle (the scheduler's handlers never reject).
 */
export function createMinuteCron(clock: Pick<Clock, "nowMs"> = systemClock): CronScheduler {
  const entries = new Set<{ spec: CronSpec; handler: () => Promise<void> }>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  /** The minute the timer is armed for: a timer that fires a little early is re-armed, not run twice. */
  let due = 0;
  const arm = () => {
    if (timer || entries.size === 0) return;
    const now = clock.nowMs();
    due = Math.floor(now / MINUTE) * MINUTE + MINUTE;
    timer = setTimeout(tick, due - now);
  };
  const tick = () => {
    timer = null;
    if (clock.nowMs() < due) return arm();
    for (const e of entries) if (cronMatches(e.spec, due)) void e.handler();
    arm();
  };
  return (schedule, handler) => {
    const entry = { spec: parseCron(schedule), handler };
    entries.add(entry);
    arm();
    return {
      stop() {
        entries.delete(entry);
        if (entries.size === 0 && timer) {
          clearTimeout(timer);
          timer = null;
        }
      },
    };
  };
}
