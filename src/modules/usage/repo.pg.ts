import { and, eq, sql } from "drizzle-orm";
import type { PgHandle } from "../../db/pg";
import { usageCounters, usageEvents } from "../../db/schema-pg";
import { writeAuditPg, type PgExecutor } from "../audit/write.pg";
import { readLicenseAccess } from "../license-api/repo.pg";
import { storeOutcomePg } from "../idempotency/repo.pg";
import { newId } from "../../shared/ids";
import type { ConsumeResult, UsageCounter, UsageRepo } from "./repo";

const keyOf = (licenseId: string, feature: string, periodKey: string) =>
  and(eq(usageCounters.licenseId, licenseId), eq(usageCounters.feature, feature), eq(usageCounters.periodKey, periodKey));

async function readUsed(tx: PgExecutor, licenseId: string, feature: string, periodKey: string): Promise<number> {
  const [row] = await tx.select({ used: usageCounters.used }).from(usageCounters).where(keyOf(licenseId, feature, periodKey));
  return row?.used ?? 0;
}

export function createUsageRepoPg(handle: PgHandle): UsageRepo {
  const { db } = handle;

  return {
    async consume(input, check, record) {
      return db.transaction(async (tx): Promise<ConsumeResult> => {
        // Re-read (and lock) the license inside the write transaction: a revoke or suspend that
        // committed after the caller's lookup must win over this report (same rule as activation).
        check(await readLicenseAccess(tx, { id: input.licenseId }, { forUpdate: true }));
        const { licenseId, feature, periodKey, quantity, limit, at } = input;
        // A quantity above the limit never fits (counters are never negative): no write to try.
        if (limit !== null && quantity > limit) return { accepted: false, used: await readUsed(tx, licenseId, feature, periodKey) };
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
        if (!bumped) return { accepted: false, used: await readUsed(tx, licenseId, feature, periodKey) };
        await tx.insert(usageEvents).values({ id: newId(), licenseId, feature, periodKey, quantity, metadata: input.metadata ?? null, createdAt: at });
        const result = { accepted: true, used: bumped.used };
        if (record) await storeOutcomePg(tx, record(result));
        return result;
      });
    },
    used: (licenseId, feature, periodKey) => readUsed(db, licenseId, feature, periodKey),
    async reset(licenseId, refs, audit) {
      return db.transaction(async (tx) => {
        const reset: UsageCounter[] = [];
        for (const r of refs) {
          const [gone] = await tx.delete(usageCounters).where(keyOf(licenseId, r.feature, r.periodKey)).returning();
          if (gone) reset.push(gone);
        }
        await writeAuditPg(tx, audit(reset));
        return reset;
      });
    },
  };
}
