// The seat state table of an add, with no database (planSeatAdd): the verb in service.ts runs it on
// what its unit of work read, on either engine.
import { describe, expect, test } from "bun:test";
import { planSeatAdd } from "./domain";

const at = new Date("2026-11-28T10:00:00.000Z");
const pending = { id: "s1", acceptedAt: null, userId: null, removedAt: null };
const accepted = { id: "s1", acceptedAt: at, userId: "u1", removedAt: null };
const unbound = { id: "s1", acceptedAt: at, userId: null, removedAt: null };
const removed = { id: "s1", acceptedAt: at, userId: "u1", removedAt: at };

describe("planSeatAdd", () => {
  test("none → invited while there is room; the limit counts pending and accepted seats", () => {
    expect(planSeatAdd(null, 3, 2)).toEqual({ kind: "invited" });
    expect(planSeatAdd(null, 3, 3)).toEqual({ kind: "limit", max: 3, used: 3 });
    expect(planSeatAdd(null, 0, 0)).toEqual({ kind: "limit", max: 0, used: 0 });
    expect(planSeatAdd(null, null, 10_000)).toEqual({ kind: "invited" });
  });

  test("pending → reinvited, at the limit too (it takes no new room)", () => {
    expect(planSeatAdd(pending, 1, 1)).toEqual({ kind: "reinvited", seatId: "s1" });
  });

  test("accepted → existing; accepted but unbound (its user deleted) → reinvited", () => {
    expect(planSeatAdd(accepted, 1, 1)).toEqual({ kind: "existing" });
    expect(planSeatAdd(unbound, 1, 1)).toEqual({ kind: "reinvited", seatId: "s1" });
  });

  test("removed → restored while there is room, limit otherwise", () => {
    expect(planSeatAdd(removed, 2, 1)).toEqual({ kind: "restored", seatId: "s1" });
    expect(planSeatAdd(removed, 2, 2)).toEqual({ kind: "limit", max: 2, used: 2 });
    expect(planSeatAdd(removed, null, 50)).toEqual({ kind: "restored", seatId: "s1" });
  });
});
