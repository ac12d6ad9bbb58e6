import { describe, expect, test } from "bun:test";
import { crossesWarning, quotaEvents, type QuotaContext } from "./events";

const AT = new Date("2026-11-21T08:00:00.000Z");
const q: QuotaContext = { licenseId: "l", productId: "p", feature: "api", period: "monthly", periodKey: "2026-11", limit: 10, quantity: 1 };

describe("crossesWarning (80 % of the limit, integer arithmetic)", () => {
  test("true only when the report goes from below the line to on or above it", () => {
    expect(crossesWarning(7, 8, 10)).toBe(true);
    expect(crossesWarning(0, 10, 10)).toBe(true);
    expect(crossesWarning(8, 9, 10)).toBe(false);
    expect(crossesWarning(6, 7, 10)).toBe(false);
    // 80 % of 3 is 2.4: 2 is below, 3 is above.
    expect(crossesWarning(2, 3, 3)).toBe(true);
    expect(crossesWarning(1, 2, 3)).toBe(false);
    // A limit of 0 starts "at" the line: nothing crosses it.
    expect(crossesWarning(0, 0, 0)).toBe(false);
  });
});

describe("quotaEvents", () => {
  test("warning on the crossing report; exceeded on the first refusal only; nothing for unlimited", () => {
    expect(quotaEvents(q, { accepted: true, before: 7, used: 8 }, AT).map((e) => [e.type, e.data as unknown])).toEqual([
      ["quota.warning", { license_id: "l", product_id: "p", feature: "api", period: "monthly", period_key: "2026-11", used: 8, limit: 10 }],
    ]);
    expect(quotaEvents(q, { accepted: true, before: 8, used: 9 }, AT)).toEqual([]);
    expect(quotaEvents({ ...q, quantity: 3 }, { accepted: false, used: 9, firstRefusal: true }, AT).map((e) => [e.type, e.data as unknown])).toEqual([
      ["quota.exceeded", { license_id: "l", product_id: "p", feature: "api", period: "monthly", period_key: "2026-11", used: 9, limit: 10, requested: 3 }],
    ]);
    expect(quotaEvents(q, { accepted: false, used: 9, firstRefusal: false }, AT)).toEqual([]);
    expect(quotaEvents({ ...q, limit: null }, { accepted: true, before: 0, used: 1_000 }, AT)).toEqual([]);
  });
});
