// The schedules' reader and the minute timer (cron.ts). Every schedule Keyward registers is checked
// against an independent matcher: Bun.cron.parse, the parser the scheduler used before.
import { expect, test } from "bun:test";
import { MINUTE } from "../shared/clock";
import { createMinuteCron, cronMatches, parseCron, slotOf } from "./cron";
import { CONTINUOUS, JOB_PASSES } from "./passes";

const at = (s: string) => Date.parse(s);

test("parseCron reads numbers, ranges, steps and lists, and refuses anything else", () => {
  const s = parseCron("*/15 8-10 1,15 * 1-5");
  expect([...s.minute]).toEqual([0, 15, 30, 45]);
  expect([...s.hour]).toEqual([8, 9, 10]);
  expect([...s.dayOfMonth]).toEqual([1, 15]);
  expect(s.month.size).toBe(12);
  expect([...s.dayOfWeek]).toEqual([1, 2, 3, 4, 5]);
  expect([...parseCron("0 0 * * 7").dayOfWeek]).toEqual([0]);
  expect([...parseCron("5-20/5 * * * *").minute]).toEqual([5, 10, 15, 20]);
  expect([...parseCron("3/20 * * * *").minute]).toEqual([3, 23, 43]);
  for (const bad of ["", "* * * *", "* * * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * * 13 *", "* * * * 8", "*/0 * * * *", "5-1 * * * *", "a * * * *", "1,,2 * * * *", "-1 * * * *", "@hourly"]) {
    expect(() => parseCron(bad)).toThrow(/invalid cron schedule/);
  }
});

test("cronMatches: day of month and day of week restricted together match either (the cron rule)", () => {
  const either = parseCron("0 0 13 * 5"); // the 13th, or any Friday
  expect(cronMatches(either, at("2026-11-13T00:00:30Z"))).toBe(true); // Friday the 13th
  expect(cronMatches(either, at("2026-11-20T00:00:00Z"))).toBe(true); // a Friday
  expect(cronMatches(either, at("2026-12-13T00:00:00Z"))).toBe(true); // a Sunday the 13th
  expect(cronMatches(either, at("2026-11-21T00:00:00Z"))).toBe(false);
  const fridays = parseCron("0 0 * * 5");
  expect(cronMatches(fridays, at("2026-12-13T00:00:00Z"))).toBe(false);
  expect(cronMatches(fridays, at("2026-11-20T00:00:00Z"))).toBe(true);
});

test("every pass's schedule fires on the same minutes as Bun.cron.parse says, over two days", () => {
  const schedules = [...new Set(JOB_PASSES.filter((p) => p.schedule !== CONTINUOUS).map((p) => p.schedule)), "0 3 * * *", "*/15 8-10 1,15 * 1-5", "0 0 13 * 5"];
  expect(schedules.length).toBeGreaterThan(3);
  const from = at("2026-11-12T22:00:00Z");
  for (const schedule of schedules) {
    const spec = parseCron(schedule);
    const ours: number[] = [];
    const theirs: number[] = [];
    for (let t = from; t < from + 2 * 24 * 60 * MINUTE; t += MINUTE) if (cronMatches(spec, t)) ours.push(t);
    for (let t = from - 1; ; ) {
      const next = Bun.cron.parse(schedule, t, { tz: "UTC" } as never)?.getTime();
      if (next === undefined || next >= from + 2 * 24 * 60 * MINUTE) break;
      theirs.push(next);
      t = next;
    }
    expect({ schedule, fires: ours }).toEqual({ schedule, fires: theirs });
  }
});

test("slotOf: the latest match of the schedule at or before now, in UTC", () => {
  const d = (s: string) => new Date(s);
  expect(slotOf("* * * * *", d("2026-11-21T08:00:00.000Z"))).toEqual(d("2026-11-21T08:00:00.000Z"));
  expect(slotOf("* * * * *", d("2026-11-21T08:00:59.999Z"))).toEqual(d("2026-11-21T08:00:00.000Z"));
  expect(slotOf("*/15 * * * *", d("2026-11-21T08:44:10.000Z"))).toEqual(d("2026-11-21T08:30:00.000Z"));
  // A firing delayed past its minute still names its own slot.
  expect(slotOf("17 * * * *", d("2026-11-21T08:18:03.000Z"))).toEqual(d("2026-11-21T08:17:00.000Z"));
  expect(slotOf("17 * * * *", d("2026-11-21T08:16:59.000Z"))).toEqual(d("2026-11-21T07:17:00.000Z"));
  expect(slotOf("0 3 * * *", d("2026-11-21T02:00:00.000Z"))).toEqual(d("2026-11-20T03:00:00.000Z"));
});

test("the minute timer fires each matching schedule once at the whole minute, and stops", async () => {
  // A clock a few milliseconds before a minute that matches "*/2" but not "1-59/2".
  const base = at("2026-11-21T08:00:00Z") - 30;
  const started = performance.now();
  const clock = { nowMs: () => base + (performance.now() - started) };
  const cron = createMinuteCron(clock);
  const fired: string[] = [];
  const even = cron("*/2 * * * *", async () => void fired.push(`even@${clock.nowMs() - base}`));
  const odd = cron("1-59/2 * * * *", async () => void fired.push("odd"));
  await Bun.sleep(250);
  expect(fired.length).toBe(1);
  expect(fired[0]).toStartWith("even@");
  expect(Number(fired[0]!.slice(5))).toBeGreaterThanOrEqual(30);
  even.stop();
  odd.stop();
});
