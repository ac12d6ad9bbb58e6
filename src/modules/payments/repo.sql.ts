// PaymentRepo on both engines, written once against the query seam (db/dialect/query.ts).
import { and, desc, eq, inArray, isNull, lt, ne, or, sql } from "drizzle-orm";
import type { QueryDialect } from "../../db/dialect/query";
import { KEYWARD_CLAIM_PREFIX, type BillingLink, type Payment, type PaymentRepo } from "./repo";

/** A license's payments, newest first: one range of payments_license_idx (exported for the query-plan test). */
export const paymentsOfLicenseQuery = (d: QueryDialect, licenseId: string) => {
  const { payments } = d.tables;
  return d.db
    .select()
    .from(payments)
    .where(eq(payments.licenseId, licenseId))
    .orderBy(desc(payments.paidAt), desc(d.byteOrder(payments.id)));
};

export function createPaymentRepo(d: QueryDialect): PaymentRepo {
  const { db } = d;
  const { billingLinks, payments, stripeEvents } = d.tables;
  const one = <T>(rows: T[]): T | null => rows[0] ?? null;
  // Each refund step is a single conditional UPDATE: under READ COMMITTED (PostgreSQL) a concurrent
  // writer of the same row waits for the first to commit and then re-checks the condition, and
  // SQLite has one writer, so exactly one caller's write takes.
  const changedOne = async (rows: PromiseLike<unknown[]>) => (await rows).length === 1;
  return {
    async claimEvent(id, type, outcome, at) {
      // ON CONFLICT waits for a concurrent inserter of the same id (another node) to finish, then skips if it committed.
      return changedOne(db.insert(stripeEvents).values({ id, type, outcome, processedAt: at }).onConflictDoNothing().returning({ id: stripeEvents.id }));
    },
    async eventOutcome(id) {
      return one(await db.select({ outcome: stripeEvents.outcome }).from(stripeEvents).where(eq(stripeEvents.id, id)))?.outcome ?? null;
    },
    async setEventOutcome(id, outcome) {
      await db.update(stripeEvents).set({ outcome }).where(eq(stripeEvents.id, id));
    },
    async recordPayment(payment) {
      return changedOne(db.insert(payments).values(payment).onConflictDoNothing().returning({ id: payments.id }));
    },
    async listPayments(licenseId) {
      return (await paymentsOfLicenseQuery(d, licenseId)) as Payment[];
    },
    async findPaymentByIntent(intent) {
      const rows = await db.select().from(payments).where(eq(payments.stripePaymentIntentId, intent)).orderBy(desc(payments.paidAt), desc(d.byteOrder(payments.id))).limit(1);
      return one(rows) as Payment | null;
    },
    async findPaymentByInvoice(invoiceId) {
      return one(await db.select().from(payments).where(eq(payments.stripeInvoiceId, invoiceId))) as Payment | null;
    },
    async setDispute(paymentId, status, stripeDisputeId) {
      return changedOne(db.update(payments).set({ disputeStatus: status, stripeDisputeId }).where(eq(payments.id, paymentId)).returning({ id: payments.id }));
    },
    async findLink(licenseId) {
      return one(await db.select().from(billingLinks).where(eq(billingLinks.licenseId, licenseId)));
    },
    async findLinkBySubscription(id) {
      return one(await db.select().from(billingLinks).where(eq(billingLinks.stripeSubscriptionId, id)));
    },
    async findLinkByCheckoutSession(id) {
      return one(await db.select().from(billingLinks).where(eq(billingLinks.stripeCheckoutSessionId, id)));
    },
    async upsertLink(link) {
      const { licenseId: _, createdAt: __, ...rest } = link;
      const [row] = await db.insert(billingLinks).values(link).onConflictDoUpdate({ target: billingLinks.licenseId, set: rest }).returning();
      return row as BillingLink;
    },
    async claimRefund(paymentId) {
      return changedOne(db.update(payments).set({ refundState: "pending" }).where(and(eq(payments.id, paymentId), isNull(payments.refundState))).returning({ id: payments.id }));
    },
    async completeRefund(paymentId, stripeRefundId, at) {
      return changedOne(
        db
          .update(payments)
          .set({ refundState: "refunded", stripeRefundId, refundedAt: at })
          .where(and(eq(payments.id, paymentId), or(isNull(payments.refundState), ne(payments.refundState, "refunded"))))
          .returning({ id: payments.id }),
      );
    },
    async releaseRefund(paymentId) {
      return changedOne(db.update(payments).set({ refundState: null }).where(and(eq(payments.id, paymentId), eq(payments.refundState, "pending"))).returning({ id: payments.id }));
    },
    async pruneEvents(before, limit) {
      if (limit <= 0) return 0;
      // substr compares exactly (LIKE would treat _ as a wildcard). One statement, so one short write
      // transaction; the conditions are repeated on the DELETE, so a row changed meanwhile is re-checked.
      const old = and(lt(stripeEvents.processedAt, before), sql`substr(${stripeEvents.id}, 1, ${KEYWARD_CLAIM_PREFIX.length}) <> ${KEYWARD_CLAIM_PREFIX}`);
      const batch = db.select({ id: stripeEvents.id }).from(stripeEvents).where(old).limit(limit);
      return (await db.delete(stripeEvents).where(and(inArray(stripeEvents.id, batch), old)).returning({ id: stripeEvents.id })).length;
    },
  };
}
