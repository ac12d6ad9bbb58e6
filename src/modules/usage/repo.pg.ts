import { and, eq, sql } from "drizzle-orm";
import type { PgHandle, PgExecutor } from "../../db/pg";
import { quotaExceededMarks, usageCounters, usageEvents } from "../../db/schema-pg";
import { writeEffectsPg } from "../outbox/write.pg";
import { readLicenseAccess } from "../license-api/repo.pg";
import { storeOutcomePg } from "../idempotency/repo.pg";
import { newId } from "../../shared/ids";
import type { ConsumeChange, ConsumeResult, UsageCounter, UsageRepo } from "./repo";

const keyOf = (licenseId: string, feature: string, periodKey: string) =>
  and(eq(usageCounters.licenseId, licenseId), eq(usageCounters.feature, feature), eq(usageCounters.periodKey, periodKey));

async function readUsed(tx: PgExecutor, licenseId: string, feature: string, periodKey: string): Promise<number> {
  const [row] = await tx.select({ used: usageCounters.used }).from(usageCounters).where(keyOf(licenseId, feature, periodKey));
  return row?.used ?? 0;
}

export function createUsageRepoPg(handle: PgHandle): UsageRepo {
  const { db } = handle;

  return {
    async consume(input, check, record, effects) {
      return db.transaction(async (tx): Promise<ConsumeResult> => {
        // Re-read (and lock) the license inside the write transaction: a revoke or suspend that
        // committed after the caller's lookup must win over this report (same rule as activation).
        check(await readLicenseAccess(tx, { id: input.licenseId }, { forUpdate: true }));
        const { licenseId, feature, periodKey, quantity, limit, at } = input;
        const refuse = async (): Promise<ConsumeResult> => {
          const used = await readUsed(tx, licenseId, feature, periodKey);
          // The first refusal of a period leaves a mark; only the report whose insert took is the first.
          const marked = await tx
            .insert(quotaExceededMarks)
            .values({ licenseId, feature, periodKey, createdAt: at })
            .onConflictDoNothing()
            .returning({ licenseId: quotaExceededMarks.licenseId });
          const change: ConsumeChange = { accepted: false, used, firstRefusal: marked.length === 1 };
          if (effects) await writeEffectsPg(tx, effects(change));
          return { accepted: false, used };
        };
        // A quantity above the limit never fits (counters are never negative): no write to try.
        if (limit !== null && quantity > limit) return await refuse();
        // The conditional increment is the guard (spec: License rule 3): the row lock taken by the
        // upsert serialises reports on other nodes, and the WHERE re-evaluates on the latest value.
        const [bumped] = await tx
          .insert(usageCounters)
          .values({ licenseId, feature, periodKey, used: quantity, updatedAt: at })
          .onConflictDoUpdate({
            target: [usageCounters.licenseId, usageCounters.feature, usageCounters.periodKey],
            set: { used: sql`${usageCounters.used} + ${quantity}`, updatedAt: at },
            setWhere: limit === null ? undefined : sql`${usageCounters.used} + ${quantity} <= ${limit}`,
          })
          .returning({ used: usageCounters.used });
        if (!bumped) return await refuse();
        await tx.insert(usageEvents).values({ id: newId(), licenseId, feature, periodKey, quantity, metadata: input.metadata ?? null, createdAt: at });
        const result = { accepted: true, used: bumped.used };
        if (effects) await writeEffectsPg(tx, effects({ accepted: true, before: bumped.used - quantity, used: bumped.used }));
        if (record) await storeOutcomePg(tx, record(result));
        return result;
      });
    },
    used: (licenseId, feature, periodKey) => readUsed(db, licenseId, feature, periodKey),
    async reset(licenseId, refs, effects) {
      return db.transaction(async (tx) => {
        const reset: UsageCounter[] = [];
        for (const r of refs) {
          const [gone] = await tx.delete(usageCounters).where(keyOf(licenseId, r.feature, r.periodKey)).returning();
          if (gone) reset.push(gone);
          await tx
            .delete(quotaExceededMarks)
            .where(and(eq(quotaExceededMarks.licenseId, licenseId), eq(quotaExceededMarks.feature, r.feature), eq(quotaExceededMarks.periodKey, r.periodKey)));
        }
        await writeEffectsPg(tx, effects(reset));
        return reset;
      });
    },
  };
}
