import { and, desc, eq, isNull, ne, or } from "drizzle-orm";
import type { DbHandle } from "../../db/client";
import { billingLinks, payments, stripeEvents } from "../../db/schema";
import type { BillingLink, Payment, PaymentRepo } from "./repo";

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
      return db.select().from(payments).where(eq(payments.licenseId, licenseId)).orderBy(desc(payments.paidAt), desc(payments.id)).all() as Payment[];
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
  };
}
