import { iso } from "../../shared/clock";
import type { Activation } from "../activations/repo";
import type { MyLicense } from "./service";

export const presentMyLicense = (m: MyLicense) => ({
  license_id: m.license.id,
  license_key: m.key,
  product_id: m.license.productId,
  product_name: m.productName,
  plan_id: m.license.planId,
  plan_name: m.planName,
  status: m.license.status,
  valid_until: iso(m.license.validUntil),
  support_until: iso(m.license.supportUntil),
  role: m.role,
  max_seats: m.maxSeats,
  used_seats: m.usedSeats,
});

export const presentPortalActivation = (a: Activation) => ({
  activation_id: a.id,
  identifier: a.identifier,
  identifier_type: a.identifierType,
  label: a.label,
  created_at: a.createdAt.toISOString(),
  last_seen_at: iso(a.lastSeenAt),
});
