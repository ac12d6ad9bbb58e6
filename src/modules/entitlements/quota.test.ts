import { describe, expect, test } from "bun:test";
import { fits, periodEnd, periodKey, periodStart, remaining } from "./quota";

const at = (s: string) => new Date(s);

describe("period keys", () => {
  test("name the UTC window for each period", () => {
    const t = at("2026-11-21T08:30:15.123Z");
    expect(periodKey("hourly", t)).toBe("2026-11-21T08");
    expect(periodKey("daily", t)).toBe("2026-11-21");
    expect(periodKey("monthly", t)).toBe("2026-11");
    expect(periodKey("yearly", t)).toBe("2026");
  });

  test("use UTC, not the local offset of the input", () => {
    // 23:30 at UTC-05:00 is already the next UTC day (and month, and year).
    const t = at("2026-12-31T23:30:00-05:00");
    expect(periodKey("daily", t)).toBe("2027-01-01");
    expect(periodKey("monthly", t)).toBe("2027-01");
    expect(periodKey("yearly", t)).toBe("2027");
    expect(periodKey("hourly", t)).toBe("2027-01-01T04");
  });

  test("roll over exactly at the boundary", () => {
    const before = at("2026-11-30T23:59:59.999Z");
    const after = at("2026-12-01T00:00:00.000Z");
    expect(periodKey("hourly", before)).toBe("2026-11-30T23");
    expect(periodKey("hourly", after)).toBe("2026-12-01T00");
    expect(periodKey("daily", before)).not.toBe(periodKey("daily", after));
    expect(periodKey("monthly", before)).toBe("2026-11");
    expect(periodKey("monthly", after)).toBe("2026-12");
    expect(periodKey("yearly", before)).toBe(periodKey("yearly", after));
  });
});

describe("period bounds", () => {
  const t = at("2028-02-29T13:45:00Z"); // leap day
  test("start and end (resets_at) enclose the instant", () => {
    expect(periodStart("hourly", t).toISOString()).toBe("2028-02-29T13:00:00.000Z");
    expect(periodEnd("hourly", t).toISOString()).toBe("2028-02-29T14:00:00.000Z");
    expect(periodStart("daily", t).toISOString()).toBe("2028-02-29T00:00:00.000Z");
    expect(periodEnd("daily", t).toISOString()).toBe("2028-03-01T00:00:00.000Z");
    expect(periodStart("monthly", t).toISOString()).toBe("2028-02-01T00:00:00.000Z");
    expect(periodEnd("monthly", t).toISOString()).toBe("2028-03-01T00:00:00.000Z");
    expect(periodStart("yearly", t).toISOString()).toBe("2028-01-01T00:00:00.000Z");
    expect(periodEnd("yearly", t).toISOString()).toBe("2029-01-01T00:00:00.000Z");
  });

  test("December rolls into the next year", () => {
    expect(periodEnd("monthly", at("2026-12-15T00:00:00Z")).toISOString()).toBe("2027-01-01T00:00:00.000Z");
    expect(periodEnd("daily", at("2026-12-31T10:00:00Z")).toISOString()).toBe("2027-01-01T00:00:00.000Z");
  });

  test("the end of one window has the next window's key", () => {
    for (const p of ["hourly", "daily", "monthly", "yearly"] as const) {
      const end = periodEnd(p, t);
      expect(periodKey(p, end)).not.toBe(periodKey(p, t));
      expect(periodKey(p, new Date(end.getTime() - 1))).toBe(periodKey(p, t));
    }
  });
});

describe("quota arithmetic", () => {
  test("a report fits only if the whole quantity fits", () => {
    expect(fits({ used: 498, limit: 500 }, 2)).toBe(true);
    expect(fits({ used: 498, limit: 500 }, 3)).toBe(false);
    expect(fits({ used: 10 ** 9, limit: null }, 5)).toBe(true);
  });
  test("remaining is never negative and null when unlimited", () => {
    expect(remaining({ used: 3, limit: 10 })).toBe(7);
    expect(remaining({ used: 12, limit: 10 })).toBe(0);
    expect(remaining({ used: 12, limit: null })).toBeNull();
  });
});
