// The payment emails (editable templates in modules/email/editable.ts): built here so every sender
// fills the same values. The purchased license's key travels sealed (sealedEmail), never in the clear.
import type { Secrets } from "../keys/secrets";
import type { License } from "../licenses/repo";
import { sealedEmail } from "../email/outbox";
import type { OutboxEmail } from "../outbox/effects";
import { isoOrNull } from "../outbox/events";

/** `license_purchased` to the license's email: the key sealed, the rest (no secret) in the clear. */
export function licensePurchasedEmail(
  secrets: Secrets,
  input: { license: License; licenseKey: string; productName: string; planName: string; at: Date },
): OutboxEmail {
  const { license } = input;
  return sealedEmail(secrets, {
    template: "license_purchased",
    to: license.email,
    at: input.at,
    data: {
      license_id: license.id,
      product_name: input.productName,
      plan_name: input.planName,
      key_hint: license.keyHint,
      valid_until: isoOrNull(license.validUntil),
      support_until: isoOrNull(license.supportUntil),
    },
    secret: { license_key: input.licenseKey },
  });
}

/** `support_renewed` to the license's email: the new support end and the previous one. */
export function supportRenewedEmail(secrets: Secrets, input: { before: License; after: License; productName: string; planName: string; at: Date }): OutboxEmail {
  const { before, after } = input;
  return sealedEmail(secrets, {
    template: "support_renewed",
    to: after.email,
    at: input.at,
    data: {
      license_id: after.id,
      product_name: input.productName,
      plan_name: input.planName,
      key_hint: after.keyHint,
      support_until: isoOrNull(after.supportUntil),
      previous_support_until: isoOrNull(before.supportUntil),
    },
  });
}
