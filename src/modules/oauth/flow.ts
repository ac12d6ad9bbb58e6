// The state of one sign-in between /start and /callback, kept in the browser rather than the database:
// sealed with AES-256-GCM under its own HKDF subkey (crypto/aead.ts), so the client can neither read
// the PKCE verifier nor forge or alter any field (a changed return_to or provider fails to open).
import { open, seal } from "../../crypto/aead";
import { isProviderId, safeReturnTo, type ProviderId } from "./domain";

export interface Flow {
  provider: ProviderId;
  /** The `state` sent to the provider; the callback must bring back exactly this. */
  state: string;
  /** PKCE code verifier; its S256 challenge went to the provider. */
  codeVerifier: string;
  returnTo: string;
  /** Epoch milliseconds after which the flow is refused. */
  expiresAtMs: number;
}

// Bound as additional data: a ciphertext sealed for another purpose under the same key cannot pass.
const AAD = "keyward/oauth-flow/v1";

export function sealFlow(key: Uint8Array, flow: Flow): string {
  return seal(key, JSON.stringify({ p: flow.provider, s: flow.state, v: flow.codeVerifier, r: flow.returnTo, x: flow.expiresAtMs }), AAD);
}

/** The flow in a cookie value, or null when it is malformed, forged or sealed under another key. */
export function openFlow(key: Uint8Array, sealed: string): Flow | null {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(open(key, sealed, AAD)).toString("utf8"));
  } catch {
    return null;
  }
  if (typeof raw !== "object" || raw === null) return null;
  const { p, s, v, r, x } = raw as Record<string, unknown>;
  if (typeof p !== "string" || !isProviderId(p)) return null;
  if (typeof s !== "string" || typeof v !== "string" || typeof r !== "string" || typeof x !== "number") return null;
  if (safeReturnTo(r) !== r) return null;
  return { provider: p, state: s, codeVerifier: v, returnTo: r, expiresAtMs: x };
}
