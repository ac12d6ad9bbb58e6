// SettingsRepo on every engine, through the settings change's unit of work (settings/service.ts
// applySettingsChange): raw key → JSON value rows, upsert and delete in one transaction with an
// audit that sees the whole document before and after.
import { afterEach, expect, test } from "bun:test";
import type { SettingsRepo } from "../../src/modules/settings/repo";
import { forEachEngine, type Opened } from "./harness";
import { repoFor } from "./repos";
import { AT, auditActions, audited, readRows, rejection } from "./rows";
import { unitOf, withPgUnits, type Unit } from "./unit";
import { applySettingsChange } from "../../src/modules/settings/service";
import type { Effects } from "../../src/modules/outbox/effects";

type Audit = (before: Record<string, unknown>, after: Record<string, unknown>) => Effects;
const change = (unit: Unit, changes: Record<string, unknown>, at: Date, audit: Audit) => unit((r) => applySettingsChange(r, changes, at, audit));

forEachEngine("SettingsRepo", (engine, open) => {
  let o: Opened;
  let repo: SettingsRepo;
  const setup = async () => {
    o = await open();
    repo = repoFor(o).settings;
  };
  afterEach(() => o?.close());

  test("an empty table reads as no settings", async () => {
    await setup();
    expect(await repo.all()).toEqual({});
  });

  test("update upserts values of every JSON shape, null deletes; audit sees before and after", async () => {
    await setup();
    const seen: unknown[] = [];
    const audit = (before: Record<string, unknown>, after: Record<string, unknown>) => {
      seen.push([before, after]);
      return audited("settings.update");
    };
    const first = {
      vendor_name: 'Acme "Ünïcode" \u2603',
      reminders_enabled: false,
      expiry_reminder_days: [30, 7, 1],
      ratio: 0.1,
      nested: { b: 1, a: [true, null] },
    };
    expect(await change(unitOf(o), first, AT, audit)).toEqual(first);
    expect(await repo.all()).toEqual(first);
    const second = await change(unitOf(o), { vendor_name: null, reminders_enabled: true, absent: null }, AT, audit);
    const { vendor_name: _dropped, ...rest } = first;
    expect(second).toEqual({ ...rest, reminders_enabled: true });
    expect(await repo.all()).toEqual(second);
    expect(seen).toEqual([
      [{}, first],
      [first, second],
    ]);
    expect((await readRows(o, "settings")).every((r) => r.updatedAt.getTime() === AT.getTime())).toBe(true);
    expect(await auditActions(o)).toEqual(["settings.update", "settings.update"]);
  });

  test("a throwing audit rolls the whole change back", async () => {
    await setup();
    await change(unitOf(o), { a: 1, b: 2 }, AT, () => audited("settings.update"));
    const err = await rejection(
      change(unitOf(o), { a: null, b: 3, c: 4 }, AT, () => {
        throw new Error("refused");
      }),
    );
    expect(err.message).toBe("refused");
    expect(await repo.all()).toEqual({ a: 1, b: 2 });
    expect(await auditActions(o)).toEqual(["settings.update"]);
  });

  if (engine === "postgres") {
    test("concurrent updates from three nodes: each audit's before/after differ by exactly its own key", async () => {
      await setup();
      const diffs: string[][] = [];
      await withPgUnits(o, 3, (units) =>
        Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            change(units[i % 3]!, { [`k${i}`]: i }, AT, (before, after) => {
              diffs.push(Object.keys(after).filter((k) => !(k in before)));
              return audited("settings.update");
            }),
          ),
        ),
      );
      expect(Object.keys(await repo.all()).length).toBe(12);
      expect(diffs.filter((d) => d.length !== 1)).toEqual([]);
      expect((await auditActions(o)).length).toBe(12);
    });
  }
});
