import { eq } from "drizzle-orm";
import { lift, immediate, lazyStatement, type DbHandle } from "../../db/client";
import { settings } from "../../db/schema";
import { writeEffects } from "../outbox/write.sqlite";
import type { SettingsRepo } from "./repo";

export function createSettingsRepo(handle: DbHandle): SettingsRepo {
  const { db } = handle;
  // Read for every email delivered and every lifecycle pass: prepared once.
  const allRows = lazyStatement(() => db.select().from(settings).prepare());
  const all = () => Object.fromEntries(allRows().all().map((r) => [r.key, r.value as unknown]));
  return {
    all: lift(all),
    async update(changes, at, effects) {
      return immediate(handle, () => {
        const before = all();
        for (const [key, value] of Object.entries(changes)) {
          if (value === null) {
            db.delete(settings).where(eq(settings.key, key)).run();
          } else {
            db.insert(settings)
              .values({ key, value, updatedAt: at })
              .onConflictDoUpdate({ target: settings.key, set: { value, updatedAt: at } })
              .run();
          }
        }
        const after = all();
        writeEffects(db, effects(before, after));
        return after;
      });
    },
  };
}
