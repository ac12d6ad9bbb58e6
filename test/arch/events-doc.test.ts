// docs/events.md lists exactly the event types the code can record (the catalogue in
// src/modules/outbox/events.ts).
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { EVENT_TYPES, type EventType } from "../../src/modules/outbox/events";

const doc = readFileSync(join(import.meta.dir, "../../docs/events.md"), "utf8");

// Every member of the EventType union is in EVENT_TYPES (a compile error otherwise).
const complete: Exclude<EventType, (typeof EVENT_TYPES)[number]> extends never ? true : false = true;

test("every recorded event type has a row in docs/events.md, and the doc lists no other", () => {
  expect(complete).toBe(true);
  const documented = [...doc.matchAll(/^\| `([a-z_]+\.[a-z_]+)` \|/gm)].map((m) => m[1]).sort();
  expect(documented).toEqual([...EVENT_TYPES].sort());
});
