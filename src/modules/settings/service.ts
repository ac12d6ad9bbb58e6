// System settings: one typed set for the whole installation, so product-bound keys never see them.
import type { Deps, Repos } from "../../deps";
import type { Effects } from "../outbox/effects";
import { assertSystemWide, type Actor } from "../../shared/actor";
import { diffChanges } from "../plans/changes";
import { normalizeSettingsPatch, resolveSettings, type Settings, type SettingsPatch } from "./domain";

export async function getSettings(deps: Deps, actor: Actor): Promise<Settings> {
  assertSystemWide(actor);
  return resolveSettings(await deps.repos.settings.all());
}

/**
 * Writes `changes` in the caller's unit of work, the settings document locked so that concurrent
 * changes (any node) apply one after another: a value upserts its key, null deletes it (back to the
 * default). `effects` see the stored document before and after. Returns the document after.
 */
export async function applySettingsChange(
  repos: Pick<Repos, "settings" | "outbox">,
  changes: Readonly<Record<string, unknown>>,
  at: Date,
  effects: (before: Record<string, unknown>, after: Record<string, unknown>) => Effects,
): Promise<Record<string, unknown>> {
  await repos.settings.lock();
  const before = await repos.settings.all();
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) await repos.settings.remove(key);
    else await repos.settings.put(key, value, at);
  }
  const after = await repos.settings.all();
  await repos.outbox.writeEffects(effects(before, after));
  return after;
}

export async function updateSettings(deps: Deps, actor: Actor, patch: SettingsPatch): Promise<Settings> {
  assertSystemWide(actor);
  const changes = normalizeSettingsPatch(patch);
  const now = deps.clock.now();
  const stored = await deps.db.transaction(({ repos }) => applySettingsChange(repos, changes, now, (before, after) => ({
    audit: {
      actor,
      action: "settings.update",
      entityType: "settings",
      // One settings document per installation: a fixed id makes GET /admin/audit?entity_id=settings work.
      entityId: "settings",
      productId: null,
      changes: diffChanges({ ...resolveSettings(before) }, { ...resolveSettings(after) }),
      at: now,
    },
  })));
  return resolveSettings(stored);
}
