import { and, eq, sql } from "drizzle-orm";
import { immediate, lazyStatement, type DbHandle } from "../../db/client";
import { usageCounters, usageEvents } from "../../db/schema";
import { writeAudit } from "../audit/write.sqlite";
import { newId } from "../../shared/ids";
import { fits } from "./domain";
import type { UsageCounter, UsageRepo } from "./repo";

export function createUsageRepo(handle: DbHandle): UsageRepo {
  const { db } = handle;
  const key = { licenseId: sql.placeholder("licenseId"), feature: sql.placeholder("feature"), periodKey: sql.placeholder("periodKey") };
  const counter = lazyStatement(() =>
    db
      .select()
      .from(usageCounters)
      .where(and(eq(usageCounters.licenseId, key.licenseId), eq(usageCounters.feature, key.feature), eq(usageCounters.periodKey, key.periodKey)))
      .prepare(),
  );
  const get = (licenseId: string, feature: string, periodKey: string): UsageCounter | null =>
    counter().get({ licenseId, feature, periodKey }) ?? null;

  return {
    consume(input) {
      return immediate(handle, () => {
        const used = get(input.licenseId, input.feature, input.periodKey)?.used ?? 0;
        if (!fits({ used, limit: input.limit }, input.quantity)) return { accepted: false, used };
        const next = used + input.quantity;
        db.insert(usageCounters)
          .values({ licenseId: input.licenseId, feature: input.feature, periodKey: input.periodKey, used: next, updatedAt: input.at })
          .onConflictDoUpdate({
            target: [usageCounters.licenseId, usageCounters.feature, usageCounters.periodKey],
            set: { used: next, updatedAt: input.at },
          })
          .run();
        db.insert(usageEvents)
          .values({
            id: newId(),
            licenseId: input.licenseId,
            feature: input.feature,
            periodKey: input.periodKey,
            quantity: input.quantity,
            metadata: input.metadata,
            createdAt: input.at,
          })
          .run();
        return { accepted: true, used: next };
      });
    },
    used(licenseId, feature, periodKey) {
      return get(licenseId, feature, periodKey)?.used ?? 0;
    },
    reset(licenseId, refs, audit) {
      return immediate(handle, () => {
        const reset: UsageCounter[] = [];
        for (const r of refs) {
          const [gone] = db
            .delete(usageCounters)
            .where(and(eq(usageCounters.licenseId, licenseId), eq(usageCounters.feature, r.feature), eq(usageCounters.periodKey, r.periodKey)))
            .returning()
            .all();
          if (gone) reset.push(gone);
        }
        writeAudit(db, audit(reset));
        return reset;
      });
    },
  };
}
