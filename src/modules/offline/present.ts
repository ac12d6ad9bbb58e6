import { iso } from "../../shared/clock";
import type { OfflineActivation } from "./repo";
import type { OfflineToken, PortalOfflineView, SelfServiceOfflineResult } from "./service";

export const presentOfflineToken = (o: OfflineToken) => ({
  token: o.token,
  fingerprint: o.fingerprint,
  perpetual: o.exp === 0,
  expires_at: o.exp === 0 ? "" : new Date(o.exp * 1000).toISOString(),
});

export const presentOfflineActivation = (a: OfflineActivation) => ({
  id: a.id,
  identifier: a.identifier,
  fingerprint: a.fingerprint,
  expires_at: iso(a.expiresAt),
  created_at: a.createdAt.toISOString(),
  created_by: a.createdBy,
  cleared_at: iso(a.clearedAt),
  cleared_by: a.clearedBy,
});

export const presentPortalOfflineView = (v: PortalOfflineView) => ({
  license_id: v.licenseId,
  offered: v.offered,
  available: v.available,
  activation: v.activation ? presentOfflineActivation(v.activation) : null,
});

export const presentPortalOfflineActivated = (r: SelfServiceOfflineResult) => ({
  ...presentOfflineToken(r),
  activation: presentOfflineActivation(r.activation),
});
