import { describe, expect, test } from "bun:test";
import { DAY, HOUR } from "../../shared/clock";
import { dueDunningDay, dueReminder, expiryJudgedAt, expiryReason } from "./domain";

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
