import { describe, expect, test } from "bun:test";
import { DAY, HOUR } from "../../shared/clock";
import { dueDunningDay, dueReminder, expiryJudgedAt, expiryReason, mergeRanges, passRanges, WATERMARK_OVERLAP_MS } from "./domain";
import { SETTING_DEFAULTS } from "../settings/domain";

const T = new Date("2026-11-21T08:00:00.000Z");
const at = (ms: number) => new Date(T.getTime() + ms);

describe("expiryReason", () => {
  const cases: [string, Parameters<typeof expiryReason>[0], number, number, string | null][] = [
    ["trial at valid_until stays", { status: "trialing", validUntil: T, pastDueSince: null }, 5, 0, null],
    ["trial past valid_until, grace ignored", { status: "trialing", validUntil: T, pastDueSince: null }, 5, 1, "trial_ended"],
    ["active inside grace", { status: "active", validUntil: T, pastDueSince: null }, 2, 2 * DAY, null],
    ["active past grace", { status: "active", validUntil: T, pastDueSince: null }, 2, 2 * DAY + 1, "grace_ended"],
    ["past_due at 30 days", { status: "past_due", validUntil: null, pastDueSince: T }, 0, 30 * DAY, null],
    ["past_due past 30 days", { status: "past_due", validUntil: null, pastDueSince: T }, 0, 30 * DAY + 1, "past_due_limit"],
    ["suspended never", { status: "suspended", validUntil: T, pastDueSince: null }, 0, 99 * DAY, null],
    ["no end never", { status: "active", validUntil: null, pastDueSince: null }, 0, 999 * DAY, null],
  ];
  for (const [name, license, grace, offset, reason] of cases) test(name, () => expect(expiryReason(license, grace, at(offset))).toBe(reason as never));
});

test("dueReminder: the most urgent due lead, none at or after the end", () => {
  const end = at(10 * DAY);
  expect(dueReminder(end, [7, 3, 1], at(2 * DAY))).toBeNull();
  expect(dueReminder(end, [7, 3, 1], at(3 * DAY))).toBe(7);
  expect(dueReminder(end, [7, 3, 1], at(8 * DAY))).toBe(3);
  expect(dueReminder(end, [7, 3, 1], at(9 * DAY + HOUR))).toBe(1);
  expect(dueReminder(end, [7, 3, 1], end)).toBeNull();
});

test("dueDunningDay: day 1 from the start, 7 after six days, 14 after thirteen, none past 30 days", () => {
  expect(dueDunningDay(T, at(-1))).toBeNull();
  expect(dueDunningDay(T, T)).toBe(1);
  expect(dueDunningDay(T, at(6 * DAY - 1))).toBe(1);
  expect(dueDunningDay(T, at(6 * DAY))).toBe(7);
  expect(dueDunningDay(T, at(13 * DAY))).toBe(14);
  expect(dueDunningDay(T, at(30 * DAY + 1))).toBeNull();
});

describe("expiryJudgedAt", () => {
  const now = new Date("2026-11-23T12:00:00.000Z");
  test("a live Stripe subscription (active, trialing) is judged 2 days back; anything else at now", () => {
    expect(expiryJudgedAt(now, "active").toISOString()).toBe("2026-11-21T12:00:00.000Z");
    expect(expiryJudgedAt(now, "trialing").toISOString()).toBe("2026-11-21T12:00:00.000Z");
    for (const status of [null, "past_due", "canceled", "unpaid", "incomplete"]) expect(expiryJudgedAt(now, status)).toEqual(now);
  });
});

describe("passRanges: the dates a pass reads", () => {
  const now = T.getTime();
  const settings = { ...SETTING_DEFAULTS, expiry_reminder_days: [7, 3, 1], support_reminder_days: [30, 7], reminders_enabled: true };
  const r = (from: number | null, to: number | null) => ({ from: from === null ? null : now + from, to: to === null ? null : now + to });

  test("without a watermark: the full windows", () => {
    expect(passRanges(now, settings, null)).toEqual({
      validUntil: [r(null, 7 * DAY)],
      pastDueSince: [r(null, 0)],
      supportUntil: [r(-30 * DAY, 30 * DAY)],
    });
  });

  test("an hour after the last pass: expiry in full, reminders, lapses and dunning days only where a threshold was crossed", () => {
    const since = now - HOUR - WATERMARK_OVERLAP_MS;
    const back = -HOUR - WATERMARK_OVERLAP_MS;
    expect(passRanges(now, settings, since)).toEqual({
      validUntil: [r(null, 0), r(DAY + back, DAY), r(3 * DAY + back, 3 * DAY), r(7 * DAY + back, 7 * DAY)],
      // The 30-day limit in full; dunning day 14, 7 and 1 for the episodes whose day began since.
      pastDueSince: [r(null, -30 * DAY), r(-13 * DAY + back, -13 * DAY), r(-6 * DAY + back, -6 * DAY), r(back, 0)],
      supportUntil: [r(back, 0), r(7 * DAY + back, 7 * DAY), r(30 * DAY + back, 30 * DAY)],
    });
  });

  test("after downtime longer than the gaps between leads, the ranges join, and stay inside the full windows", () => {
    const since = now - 10 * DAY;
    expect(passRanges(now, settings, since)).toEqual({
      validUntil: [r(null, 7 * DAY)],
      // Days 14, 7 and 1 begun in those 10 days: episodes begun 23 to 0 days ago.
      pastDueSince: [r(null, -30 * DAY), r(-23 * DAY, 0)],
      // Ends in (7, 20] days had crossed their 30-day threshold before the last pass, which sent it.
      supportUntil: [r(-10 * DAY, 7 * DAY), r(20 * DAY, 30 * DAY)],
    });
    expect(passRanges(now, settings, now - 40 * DAY).supportUntil).toEqual([r(-30 * DAY, 30 * DAY)]);
  });

  test("reminders off: no reminder ranges, lapse notices still read", () => {
    const off = { ...settings, reminders_enabled: false };
    expect(passRanges(now, off, null)).toEqual({ validUntil: [r(null, 0)], pastDueSince: [r(null, 0)], supportUntil: [r(-30 * DAY, 0)] });
    // Dunning emails are not reminders: still sent.
    expect(passRanges(now, off, now - HOUR)).toEqual({
      validUntil: [r(null, 0)],
      pastDueSince: [r(null, -30 * DAY), r(-13 * DAY - HOUR, -13 * DAY), r(-6 * DAY - HOUR, -6 * DAY), r(-HOUR, 0)],
      supportUntil: [r(-HOUR, 0)],
    });
  });
});

test("mergeRanges joins overlapping and touching ranges and drops empty ones", () => {
  expect(mergeRanges([{ from: 5, to: 9 }, null, { from: null, to: 1 }, { from: 1, to: 3 }, { from: 8, to: 12 }, { from: 20, to: null }])).toEqual([
    { from: null, to: 3 },
    { from: 5, to: 12 },
    { from: 20, to: null },
  ]);
});
