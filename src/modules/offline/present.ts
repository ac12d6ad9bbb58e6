import type { OfflineToken } from "./service";

export const presentOfflineToken = (o: OfflineToken) => ({
  token: o.token,
  fingerprint: o.fingerprint,
  perpetual: o.exp === 0,
  expires_at: o.exp === 0 ? "" : new Date(o.exp * 1000).toISOString(),
});
