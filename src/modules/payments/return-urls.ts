// Where Stripe Checkout sends the buyer back (BASE_URL). Placeholder until the payments pages exist.
export function checkoutReturnUrls(baseUrl: string): { success: string; cancel: string } {
  const base = baseUrl.replace(/\/+$/, "");
  return { success: `${base}/checkout/success?session_id={CHECKOUT_SESSION_ID}`, cancel: `${base}/checkout/cancel` };
}
