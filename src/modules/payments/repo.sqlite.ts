import { and, desc, eq, inArray, isNull, lt, ne, or, sql } from "drizzle-orm";
import type { DbHandle } from "../../db/client";
import { billingLinks, payments, stripeEvents } from "../../db/schema";
import { KEYWARD_CLAIM_PREFIX, type BillingLink, type Payment, type PaymentRepo } from "./repo";

/** A license's payments, newest first: one range of payments_license_idx (exported for the query-plan test). */
export const paymentsOfLicenseQuery = (db: DbHandle["db"], licenseId: string) =>
  db.select().from(payments).where(eq(payments.licenseId, licenseId)).orderBy(desc(payments.paidAt), desc(payments.id));

export function createPaymentRepo(handle: DbHandle): PaymentRepo {
  const { db } = handle;
  return {
    async claimEvent(id, type, outcome, at) {
      const inserted = db.insert(stripeEvents).values({ id, type, outcome, processedAt: at }).onConflictDoNothing().returning({ id: stripeEvents.id }).all();
      return inserted.length === 1;
    },
    async eventOutcome(id) {
      return db.select({ outcome: stripeEvents.outcome }).from(stripeEvents).where(eq(stripeEvents.id, id)).get()?.outcome ?? null;
    },
    async setEventOutcome(id, outcome) {
      db.update(stripeEvents).set({ outcome }).where(eq(stripeEvents.id, id)).run();
    },
    async recordPayment(payment) {
      return db.insert(payments).values(payment).onConflictDoNothing().returning({ id: payments.id }).all().length === 1;
    },
    async listPayments(licenseId) {
      return paymentsOfLicenseQuery(db, licenseId).all() as Payment[];
    },
    async findPaymentByIntent(intent) {
      const row = db.select().from(payments).where(eq(payments.stripePaymentIntentId, intent)).orderBy(desc(payments.paidAt), desc(payments.id)).limit(1).get();
      return (row as Payment | undefined) ?? null;
    },
    async findPaymentByInvoice(invoiceId) {
      return (db.select().from(payments).where(eq(payments.stripeInvoiceId, invoiceId)).get() as Payment | undefined) ?? null;
    },
    async setDispute(paymentId, status, stripeDisputeId) {
      return db.update(payments).set({ disputeStatus: status, stripeDisputeId }).where(eq(payments.id, paymentId)).returning({ id: payments.id }).all().length === 1;
    },
    async findLink(licenseId) {
      return db.select().from(billingLinks).where(eq(billingLinks.licenseId, licenseId)).get() ?? null;
    },
    async findLinkBySubscription(id) {
      return db.select().from(billingLinks).where(eq(billingLinks.stripeSubscriptionId, id)).get() ?? null;
    },
    async findLinkByCheckoutSession(id) {
      return db.select().from(billingLinks).where(eq(billingLinks.stripeCheckoutSessionId, id)).get() ?? null;
    },
    async upsertLink(link) {
      const { licenseId, createdAt, ...rest } = link;
      const [row] = db
        .insert(billingLinks)
        .values(link)
        .onConflictDoUpdate({ target: billingLinks.licenseId, set: rest })
        .returning()
        .all();
      return row as BillingLink;
    },
    async claimRefund(paymentId) {
      const claimed = db
        .update(payments)
        .set({ refundState: "pending" })
        .where(and(eq(payments.id, paymentId), isNull(payments.refundState)))
        .returning({ id: payments.id })
        .all();
      return claimed.length === 1;
    },
    async completeRefund(paymentId, stripeRefundId, at) {
      const done = db
        .update(payments)
        .set({ refundState: "refunded", stripeRefundId, refundedAt: at })
        .where(and(eq(payments.id, paymentId), or(isNull(payments.refundState), ne(payments.refundState, "refunded"))))
        .returning({ id: payments.id })
        .all();
      return done.length === 1;
    },
    async releaseRefund(paymentId) {
      const released = db
        .update(payments)
        .set({ refundState: null })
        .where(and(eq(payments.id, paymentId), eq(payments.refundState, "pending")))
        .returning({ id: payments.id })
        .all();
      return released.length === 1;
    },
    async pruneEvents(before, limit) {
      if (limit <= 0) return 0;
      // substr compares bytes exactly (LIKE would treat _ as a wildcard). One statement, so one short
      // write transaction: other writers wait for a batch at most. The rows are deleted by primary
      // key (SQLite has one writer: nothing changes them in between).
      const old = and(lt(stripeEvents.processedAt, before), sql`substr(${stripeEvents.id}, 1, ${KEYWARD_CLAIM_PREFIX.length}) <> ${KEYWARD_CLAIM_PREFIX}`);
      const batch = db.select({ id: stripeEvents.id }).from(stripeEvents).where(old).limit(limit);
      return db.delete(stripeEvents).where(inArray(stripeEvents.id, batch)).returning({ id: stripeEvents.id }).all().length;
    },
  };
}
