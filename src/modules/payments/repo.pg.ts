import { and, desc, eq, inArray, isNull, lt, ne, or, sql } from "drizzle-orm";
import type { PgHandle } from "../../db/pg";
import { billingLinks, payments, stripeEvents } from "../../db/schema-pg";
import { KEYWARD_CLAIM_PREFIX, type BillingLink, type Payment, type PaymentRepo } from "./repo";

/** A license's payments, newest first: one range of payments_license_idx (exported for the query-plan test). */
export const paymentsOfLicenseQueryPg = (db: PgHandle["db"], licenseId: string) =>
  db
    .select()
    .from(payments)
    .where(eq(payments.licenseId, licenseId))
    .orderBy(desc(payments.paidAt), sql`${payments.id} COLLATE "C" DESC`);

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
      return (await paymentsOfLicenseQueryPg(db, licenseId)) as Payment[];
    },
    async findPaymentByIntent(intent) {
      const [row] = await db.select().from(payments).where(eq(payments.stripePaymentIntentId, intent)).orderBy(desc(payments.paidAt), desc(payments.id)).limit(1);
      return (row as Payment | undefined) ?? null;
    },
    async findPaymentByInvoice(invoiceId) {
      const [row] = await db.select().from(payments).where(eq(payments.stripeInvoiceId, invoiceId));
      return (row as Payment | undefined) ?? null;
    },
    async setDispute(paymentId, status, stripeDisputeId) {
      const rows = await db.update(payments).set({ disputeStatus: status, stripeDisputeId }).where(eq(payments.id, paymentId)).returning({ id: payments.id });
      return rows.length === 1;
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
    // Each a single conditional UPDATE: under READ COMMITTED a concurrent writer of the same row waits
    // for the first to commit and then re-checks the condition, so exactly one caller's write takes.
    async claimRefund(paymentId) {
      const claimed = await db
        .update(payments)
        .set({ refundState: "pending" })
        .where(and(eq(payments.id, paymentId), isNull(payments.refundState)))
        .returning({ id: payments.id });
      return claimed.length === 1;
    },
    async completeRefund(paymentId, stripeRefundId, at) {
      const done = await db
        .update(payments)
        .set({ refundState: "refunded", stripeRefundId, refundedAt: at })
        .where(and(eq(payments.id, paymentId), or(isNull(payments.refundState), ne(payments.refundState, "refunded"))))
        .returning({ id: payments.id });
      return done.length === 1;
    },
    async releaseRefund(paymentId) {
      const released = await db
        .update(payments)
        .set({ refundState: null })
        .where(and(eq(payments.id, paymentId), eq(payments.refundState, "pending")))
        .returning({ id: payments.id });
      return released.length === 1;
    },
    async pruneEvents(before, limit) {
      if (limit <= 0) return 0;
      // substr compares characters exactly (LIKE would treat _ as a wildcard), as on SQLite.
      const old = and(lt(stripeEvents.processedAt, before), sql`substr(${stripeEvents.id}, 1, ${KEYWARD_CLAIM_PREFIX.length}) <> ${KEYWARD_CLAIM_PREFIX}`);
      const batch = db.select({ id: stripeEvents.id }).from(stripeEvents).where(old).limit(limit);
      return (await db.delete(stripeEvents).where(and(inArray(stripeEvents.id, batch), old)).returning({ id: stripeEvents.id })).length;
    },
  };
}
