// Which address is the client when Keyward sits behind reverse proxies (DECISIONS: Abuse limits:
// "the right-most address not added by a trusted proxy, never the left-most X-Forwarded-For entry").
//
// Every proxy APPENDS the address it received the connection from to X-Forwarded-For. The entries a
// client sends itself come first and are worthless: a client that rotates a fake first entry must
// not get a fresh rate limit or lockout budget, nor be able to blame a victim's address. So the list
// is read from the right, and only as far as trusted proxies wrote it.
//
// TRUST_PROXY (parsed by src/config.ts, the only reader of the environment):
//   off           X-Forwarded-For is ignored; the client is the socket address.
//   hops N        N proxies stand in front of Keyward and every request passes through all of them.
//                 The socket peer is hop 1; each hop appended the address it saw, so the client is the
//                 N-th entry from the right. `true` means 1: the right-most entry.
//   CIDR list     proxies are recognised by address. Only when the socket peer is one of them is the
//                 header read: from the right, skipping trusted addresses; the first untrusted one is
//                 the client.
// A malformed entry is never the client: the walk stops before it and the last trusted hop's
// address (the one that wrote it) is used.
import { BlockList, isIP } from "node:net";

export type TrustProxy =
  | { readonly mode: "off" }
  | { readonly mode: "hops"; readonly hops: number }
  /** Normalized `address/prefix` entries (IPv4 and IPv6). */
  | { readonly mode: "cidrs"; readonly cidrs: readonly string[] };

export const MAX_TRUSTED_HOPS = 32;
const OFF: TrustProxy = Object.freeze({ mode: "off" });

/** Thrown by parseTrustProxy with the reason; config.ts turns it into a ConfigError naming TRUST_PROXY. */
export class TrustProxyParseError extends Error {}

/** `raw` is the trimmed variable, or null when unset/empty. */
export function parseTrustProxy(raw: string | null): TrustProxy {
  if (raw === null) return OFF;
  const lower = raw.toLowerCase();
  if (["false", "no", "off", "0"].includes(lower)) return OFF;
  // Backward compatible with the old boolean: "true" meant "behind one proxy" and now says exactly that.
  if (["true", "yes", "on"].includes(lower)) return Object.freeze({ mode: "hops", hops: 1 });
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    if (hops === 0) return OFF;
    if (hops > MAX_TRUSTED_HOPS) throw new TrustProxyParseError(`hop count must be between 1 and ${MAX_TRUSTED_HOPS}, got ${hops}`);
    return Object.freeze({ mode: "hops", hops });
  }
  const cidrs = raw.split(",").map((part) => {
    const entry = part.trim();
    const cidr = parseCidr(entry);
    if (!cidr) {
      throw new TrustProxyParseError(
        `must be false, true, a hop count (1-${MAX_TRUSTED_HOPS}) or a comma-separated list of proxy addresses/CIDRs; "${entry}" is none of these`,
      );
    }
    return cidr;
  });
  return Object.freeze({ mode: "cidrs", cidrs: Object.freeze(cidrs) });
}

/** "10.0.0.0/8", "2001:db8::/32" or a single address; normalized to `address/prefix`, or null. */
function parseCidr(entry: string): string | null {
  const slash = entry.indexOf("/");
  const address = plainAddress(slash < 0 ? entry : entry.slice(0, slash));
  if (address === null) return null;
  const bits = isIP(address) === 4 ? 32 : 128;
  if (slash < 0) return `${address}/${bits}`;
  const prefix = entry.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > bits) return null;
  return `${address}/${Number(prefix)}`;
}

const MAPPED_V4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/** A bare IPv4/IPv6 address, lower-cased, IPv4-mapped IPv6 as IPv4; null for anything else. */
function plainAddress(s: string): string | null {
  // Zone ids (fe80::1%eth0) name an interface of the machine that wrote them: not a client address.
  if (s.includes("%") || isIP(s) === 0) return null;
  const mapped = MAPPED_V4.exec(s);
  return mapped ? mapped[1]! : s.toLowerCase();
}

/**
 * One X-Forwarded-For entry as an address, or null when malformed. Accepts what proxies write: an
 * address, `[v6]`, `[v6]:port`, `v4:port`. Anything else (names, "unknown", garbage) is null.
 */
export function forwardedAddress(entry: string): string | null {
  let v = entry.trim();
  if (v.startsWith("[")) {
    const end = v.indexOf("]");
    if (end < 0 || !/^(?::\d{1,5})?$/.test(v.slice(end + 1))) return null;
    v = v.slice(1, end);
  } else {
    const colon = v.indexOf(":");
    if (colon > 0 && colon === v.lastIndexOf(":")) {
      if (!/^\d{1,5}$/.test(v.slice(colon + 1))) return null;
      v = v.slice(0, colon);
    }
  }
  return plainAddress(v);
}

/** The socket peer as an address (IPv4-mapped IPv6 as IPv4), or null when there is none. */
function peerAddress(peer: string | null): string | null {
  return peer === null ? null : plainAddress(peer);
}

/**
 * Builds the resolver once at boot: (X-Forwarded-For header or null, socket address or null) → the
 * client address. `noPeer` names requests that did not come over a socket (in-process tests).
 */
export function clientAddressResolver(trust: TrustProxy, noPeer: string): (xff: string | null, peer: string | null) => string {
  switch (trust.mode) {
    case "off":
      return (_xff, peer) => peer ?? noPeer;
    case "hops": {
      const hops = trust.hops;
      // The in-process caller (no socket) stands in for the nearest proxy, as a socket peer would.
      return (xff, peer) => {
        let client = peer === null ? noPeer : (peerAddress(peer) ?? peer);
        if (xff === null) return client;
        const entries = xff.split(",");
        // Entry i from the right was appended by hop i+1; with fewer entries than hops, the left-most
        // is the furthest address a trusted proxy wrote.
        for (let i = 0; i < hops && i < entries.length; i++) {
          const address = forwardedAddress(entries[entries.length - 1 - i]!);
          if (address === null) break;
          client = address;
        }
        return client;
      };
    }
    case "cidrs": {
      const list = new BlockList();
      for (const cidr of trust.cidrs) {
        const [address, prefix] = cidr.split("/") as [string, string];
        list.addSubnet(address, Number(prefix), isIP(address) === 4 ? "ipv4" : "ipv6");
      }
      const trusted = (address: string) => list.check(address, isIP(address) === 4 ? "ipv4" : "ipv6");
      return (xff, peer) => {
        const socket = peerAddress(peer);
        // Only a trusted peer may speak for someone else; anyone else is the client, whatever it sends.
        if (socket === null || !trusted(socket)) return peer ?? noPeer;
        if (xff === null) return socket;
        const entries = xff.split(",");
        let client = socket;
        for (let i = entries.length - 1; i >= 0; i--) {
          const address = forwardedAddress(entries[i]!);
          if (address === null) return client;
          client = address;
          if (!trusted(address)) return address;
        }
        return client; // every entry is a trusted proxy: the left-most is the furthest known hop
      };
    }
  }
}
