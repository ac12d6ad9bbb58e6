// SettingsRepo on both engines, written once against the query seam (db/dialect/query.ts).
import { eq } from "drizzle-orm";
import type { QueryDialect } from "../../db/dialect/query";
import type { SettingsRepo } from "./repo";

export function createSettingsRepo(d: QueryDialect): SettingsRepo {
  const { db } = d;
  const { settings } = d.tables;
  // Read for every email delivered and every lifecycle pass: prepared once.
  const allRows = d.prepared("settings_all", () => db.select().from(settings).orderBy(d.byteOrder(settings.key)));
  return {
    async all() {
      return Object.fromEntries((await allRows({})).map((r) => [r.key, r.value as unknown]));
    },
    async lock() {
      await d.lockKey("settings");
    },
    async put(key, value, at) {
      await db.insert(settings).values({ key, value, updatedAt: at }).onConflictDoUpdate({ target: settings.key, set: { value, updatedAt: at } });
    },
    async remove(key) {
      await db.delete(settings).where(eq(settings.key, key));
    },
  };
}
