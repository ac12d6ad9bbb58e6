// System settings: one typed set for the whole installation, so product-bound keys never see them.
import type { Deps } from "../../deps";
import { assertSystemWide, type Actor } from "../../shared/actor";
import { diffChanges } from "../plans/changes";
import { normalizeSettingsPatch, resolveSettings, type Settings, type SettingsPatch } from "./domain";

export async function getSettings(deps: Deps, actor: Actor): Promise<Settings> {
  assertSystemWide(actor);
  return resolveSettings(await deps.repos.settings.all());
}

export async function updateSettings(deps: Deps, actor: Actor, patch: SettingsPatch): Promise<Settings> {
  assertSystemWide(actor);
  const changes = normalizeSettingsPatch(patch);
  const stored = await deps.repos.settings.update(changes, deps.clock.now(), (before, after) => ({
    audit: {
      actor,
      action: "settings.update",
      entityType: "settings",
      // One settings document per installation: a fixed id makes GET /admin/audit?entity_id=settings work.
      entityId: "settings",
      productId: null,
      changes: diffChanges({ ...resolveSettings(before) }, { ...resolveSettings(after) }),
      at: deps.clock.now(),
    },
  }));
  return resolveSettings(stored);
}
