// Readers for the Stripe objects webhook events carry (API version of src/modules/payments/stripe.ts).
// Event payloads are read defensively — a field of the wrong shape reads as absent — so an
// unexpected payload ends in an "ignored_…" outcome instead of a failure Stripe would retry forever.

type Obj = Record<string, unknown>;

const obj = (v: unknown): Obj | null => (v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : null);
const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);
const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
/** An expandable reference: the id, or the expanded object's id. */
export const ref = (v: unknown): string | null => str(v) ?? str(obj(v)?.id);
const seconds = (v: unknown): Date | null => {
  const n = num(v);
  return n === null ? null : new Date(n * 1000);
};
const metadataOf = (v: unknown): Record<string, string> => {
  const m = obj(v);
  if (!m) return {};
  return Object.fromEntries(Object.entries(m).filter((e): e is [string, string] => typeof e[1] === "string"));
};
const maxDate = (dates: (Date | null)[]): Date | null =>
  dates.reduce<Date | null>((a, d) => (d === null ? a : a === null || d.getTime() > a.getTime() ? d : a), null);

/** The metadata Keyward puts on a purchase's Checkout Session and on its subscription (purchase.ts). */
export const PURCHASE_KIND = "purchase";
export interface PurchaseMetadata {
  planId: string;
  /** The buyer's address as given to POST /license/checkout (on the subscription only). */
  email: string | null;
}

export function purchaseMetadata(metadata: Record<string, string>): PurchaseMetadata | null {
  if (metadata.keyward_kind !== PURCHASE_KIND || !metadata.keyward_plan_id) return null;
  return { planId: metadata.keyward_plan_id, email: metadata.keyward_email ?? null };
}

export interface CheckoutSessionView {
  id: string;
  mode: string | null;
  paymentStatus: string | null;
  metadata: Record<string, string>;
  customerId: string | null;
  email: string | null;
  paymentIntentId: string | null;
  subscriptionId: string | null;
  invoiceId: string | null;
  amount: number | null;
  currency: string | null;
}

export function readCheckoutSession(v: unknown): CheckoutSessionView | null {
  const s = obj(v);
  const id = str(s?.id);
  if (!s || !id) return null;
  return {
    id,
    mode: str(s.mode),
    paymentStatus: str(s.payment_status),
    metadata: metadataOf(s.metadata),
    customerId: ref(s.customer),
    email: str(obj(s.customer_details)?.email) ?? str(s.customer_email),
    paymentIntentId: ref(s.payment_intent),
    subscriptionId: ref(s.subscription),
    invoiceId: ref(s.invoice),
    amount: num(s.amount_total),
    currency: str(s.currency),
  };
}

export interface InvoiceView {
  id: string;
  customerId: string | null;
  email: string | null;
  billingReason: string | null;
  /** parent.subscription_details.subscription (invoice.subscription no longer exists). */
  subscriptionId: string | null;
  /** The subscription's metadata as the invoice snapshots it. */
  subscriptionMetadata: Record<string, string>;
  amountPaid: number | null;
  currency: string | null;
  /** The latest end of the invoice's line periods. */
  periodEnd: Date | null;
}

export function readInvoice(v: unknown): InvoiceView | null {
  const i = obj(v);
  const id = str(i?.id);
  if (!i || !id) return null;
  const details = obj(obj(i.parent)?.subscription_details);
  const lines = obj(i.lines)?.data;
  return {
    id,
    customerId: ref(i.customer),
    email: str(i.customer_email),
    billingReason: str(i.billing_reason),
    subscriptionId: ref(details?.subscription),
    subscriptionMetadata: metadataOf(details?.metadata),
    amountPaid: num(i.amount_paid),
    currency: str(i.currency),
    periodEnd: maxDate(Array.isArray(lines) ? lines.map((l) => seconds(obj(obj(l)?.period)?.end)) : []),
  };
}

export interface SubscriptionView {
  id: string;
  customerId: string | null;
  status: string | null;
  metadata: Record<string, string>;
  trialEnd: Date | null;
  /** The latest items.data[].current_period_end (no longer on the subscription itself). */
  periodEnd: Date | null;
}

export function readSubscription(v: unknown): SubscriptionView | null {
  const s = obj(v);
  const id = str(s?.id);
  if (!s || !id) return null;
  const items = obj(s.items)?.data;
  return {
    id,
    customerId: ref(s.customer),
    status: str(s.status),
    metadata: metadataOf(s.metadata),
    trialEnd: seconds(s.trial_end),
    periodEnd: maxDate(Array.isArray(items) ? items.map((it) => seconds(obj(it)?.current_period_end)) : []),
  };
}

export interface DisputeView {
  id: string;
  chargeId: string | null;
  paymentIntentId: string | null;
  /** warning_needs_response | warning_under_review | warning_closed | needs_response | under_review | won | lost */
  status: string | null;
  amount: number | null;
  reason: string | null;
}

export function readDispute(v: unknown): DisputeView | null {
  const d = obj(v);
  const id = str(d?.id);
  if (!d || !id) return null;
  return { id, chargeId: ref(d.charge), paymentIntentId: ref(d.payment_intent), status: str(d.status), amount: num(d.amount), reason: str(d.reason) };
}

export interface ChargeView {
  id: string;
  paymentIntentId: string | null;
  amount: number | null;
  amountRefunded: number | null;
  /** true: refunded in full (Stripe's `refunded`); a partial refund leaves it false. */
  refunded: boolean;
  /** The newest refund's id when the event carries the charge's refunds (newest first), else null. */
  latestRefundId: string | null;
  currency: string | null;
}

export function readCharge(v: unknown): ChargeView | null {
  const c = obj(v);
  const id = str(c?.id);
  if (!c || !id) return null;
  const refunds = obj(c.refunds)?.data;
  const first = Array.isArray(refunds) ? str(obj(refunds[0])?.id) : null;
  return {
    id,
    paymentIntentId: ref(c.payment_intent),
    amount: num(c.amount),
    amountRefunded: num(c.amount_refunded),
    refunded: c.refunded === true,
    latestRefundId: first,
    currency: str(c.currency),
  };
}
