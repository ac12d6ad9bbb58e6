import { eq, sql } from "drizzle-orm";
import type { PgHandle, PgExecutor } from "../../db/pg";
import { settings } from "../../db/schema-pg";
import { serializable } from "../../db/serializable.pg";
import { writeEffectsPg } from "../outbox/write.pg";
import type { SettingsRepo } from "./repo";

async function all(tx: PgExecutor): Promise<Record<string, unknown>> {
  const rows = await tx.select().from(settings).orderBy(sql`${settings.key} COLLATE "C"`);
  return Object.fromEntries(rows.map((r) => [r.key, r.value as unknown]));
}

export function createSettingsRepoPg(handle: PgHandle): SettingsRepo {
  const { db } = handle;
  return {
    all: () => all(db),
    async update(changes, at, effects) {
      // SERIALIZABLE: the audit diff compares the whole document before and after, and keys another
      // node inserts at the same time have no row to lock; a conflicting update re-runs instead.
      return await serializable(db, async (tx) => {
        const before = await all(tx);
        for (const [key, value] of Object.entries(changes)) {
          if (value === null) {
            await tx.delete(settings).where(eq(settings.key, key));
          } else {
            await tx
              .insert(settings)
              .values({ key, value, updatedAt: at })
              .onConflictDoUpdate({ target: settings.key, set: { value, updatedAt: at } });
          }
        }
        const after = await all(tx);
        await writeEffectsPg(tx, effects(before, after));
        return after;
      });
    },
  };
}
