import { desc, eq, sql } from "drizzle-orm";
import type { PgHandle } from "../../db/pg";
import { billingLinks, payments, stripeEvents } from "../../db/schema-pg";
import type { BillingLink, Payment, PaymentRepo } from "./repo";

export function createPaymentRepoPg(handle: PgHandle): PaymentRepo {
  const { db } = handle;
  return {
    async claimEvent(id, type, outcome, at) {
      // ON CONFLICT waits for a concurrent inserter of the same id to finish, then skips if it committed.
      const inserted = await db.insert(stripeEvents).values({ id, type, outcome, processedAt: at }).onConflictDoNothing().returning({ id: stripeEvents.id });
      return inserted.length === 1;
    },
    async eventOutcome(id) {
      const [row] = await db.select({ outcome: stripeEvents.outcome }).from(stripeEvents).where(eq(stripeEvents.id, id));
      return row?.outcome ?? null;
    },
    async setEventOutcome(id, outcome) {
      await db.update(stripeEvents).set({ outcome }).where(eq(stripeEvents.id, id));
    },
    async recordPayment(payment) {
      return (await db.insert(payments).values(payment).onConflictDoNothing().returning({ id: payments.id })).length === 1;
    },
    async listPayments(licenseId) {
      return (await db
        .select()
        .from(payments)
        .where(eq(payments.licenseId, licenseId))
        .orderBy(desc(payments.paidAt), sql`${payments.id} COLLATE "C" DESC`)) as Payment[];
    },
    async findLink(licenseId) {
      const [row] = await db.select().from(billingLinks).where(eq(billingLinks.licenseId, licenseId));
      return row ?? null;
    },
    async findLinkBySubscription(id) {
      const [row] = await db.select().from(billingLinks).where(eq(billingLinks.stripeSubscriptionId, id));
      return row ?? null;
    },
    async findLinkByCheckoutSession(id) {
      const [row] = await db.select().from(billingLinks).where(eq(billingLinks.stripeCheckoutSessionId, id));
      return row ?? null;
    },
    async upsertLink(link) {
      const { licenseId, createdAt, ...rest } = link;
      const [row] = await db.insert(billingLinks).values(link).onConflictDoUpdate({ target: billingLinks.licenseId, set: rest }).returning();
      return row as BillingLink;
    },
  };
}
