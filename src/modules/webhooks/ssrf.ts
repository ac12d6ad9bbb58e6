// Server-side request forgery guard of webhook targets (DECISIONS: Webhooks and email): an admin
// must not be able to point Keyward at its own network. Refused: private, loopback, link-local,
// shared address space (CGNAT), unique-local, multicast, unspecified, reserved and documentation
// ranges, and the IPv6 forms that embed such an IPv4 address (IPv4-mapped, -translated, -compatible, NAT64,
// 6to4). Checked when an endpoint is saved (literal addresses and what its host name resolves to)
// and again at every delivery, on every address the name resolves to; the request then connects to
// an address that passed the check (deliver.ts pins it), so a name cannot resolve to a public
// address at the check and a private one at the connect. WEBHOOK_ALLOW_PRIVATE=true turns it off.
import { isIP } from "node:net";

/** Resolves a host name to all its addresses (node:dns lookup, the system resolver); a seam for tests. */
export type HostResolver = (hostname: string) => Promise<string[]>;

export const systemResolver: HostResolver = async (hostname) => {
  // node:dns is loaded with the first webhook delivery, not at every start (about 1 ms there).
  const { lookup } = await import("node:dns/promises");
  return (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);
};

type V4Range = [number, number, number, number, number, string];
const V4_BLOCKED: V4Range[] = [
  [0, 0, 0, 0, 8, "unspecified (0.0.0.0/8)"],
  [10, 0, 0, 0, 8, "private (10.0.0.0/8)"],
  [100, 64, 0, 0, 10, "shared address space / CGNAT (100.64.0.0/10)"],
  [127, 0, 0, 0, 8, "loopback (127.0.0.0/8)"],
  [169, 254, 0, 0, 16, "link-local (169.254.0.0/16)"],
  [172, 16, 0, 0, 12, "private (172.16.0.0/12)"],
  [192, 0, 0, 0, 24, "IETF protocol assignments (192.0.0.0/24)"],
  [192, 0, 2, 0, 24, "documentation (192.0.2.0/24)"],
  [192, 88, 99, 0, 24, "6to4 relay anycast (192.88.99.0/24)"],
  [192, 168, 0, 0, 16, "private (192.168.0.0/16)"],
  [198, 18, 0, 0, 15, "benchmarking (198.18.0.0/15)"],
  [198, 51, 100, 0, 24, "documentation (198.51.100.0/24)"],
  [203, 0, 113, 0, 24, "documentation (203.0.113.0/24)"],
  [224, 0, 0, 0, 4, "multicast (224.0.0.0/4)"],
  [240, 0, 0, 0, 4, "reserved (240.0.0.0/4, broadcast)"],
];

function v4ToInt(ip: string): number {
  return ip.split(".").reduce((n, part) => n * 256 + Number(part), 0);
}

function blockedV4(n: number): string | null {
  for (const [a, b, c, d, bits, why] of V4_BLOCKED) {
    const base = ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if (((n & mask) >>> 0) === base) return why;
  }
  return null;
}

/** The eight 16-bit groups of an IPv6 address (with an optional dotted IPv4 tail); fewer when malformed. */
export function ipv6Groups(ip: string): number[] {
  let s = ip.toLowerCase().split("%")[0]!;
  const lastColon = s.lastIndexOf(":");
  const tail = s.slice(lastColon + 1);
  if (tail.includes(".")) {
    const n = v4ToInt(tail);
    s = `${s.slice(0, lastColon + 1)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const parse = (p: string) => (p === "" ? [] : p.split(":").map((x) => parseInt(x, 16)));
  const double = s.indexOf("::");
  if (double < 0) return parse(s);
  const h = parse(s.slice(0, double));
  const r = parse(s.slice(double + 2));
  return [...h, ...new Array<number>(Math.max(8 - h.length - r.length, 0)).fill(0), ...r];
}

function blockedV6(ip: string): string | null {
  const g = ipv6Groups(ip);
  if (g.length !== 8) return "malformed IPv6 address";
  const embedded = (hi: number, lo: number) => blockedV4(((hi << 16) >>> 0) + lo);
  const allZero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (allZero(0, 8)) return "unspecified (::)";
  if (allZero(0, 7) && g[7] === 1) return "loopback (::1)";
  // ::ffff:a.b.c.d (IPv4-mapped) and ::a.b.c.d (IPv4-compatible): judged as the IPv4 address.
  if (allZero(0, 5) && g[5] === 0xffff) return embedded(g[6]!, g[7]!) ?? null;
  if (allZero(0, 6)) return embedded(g[6]!, g[7]!) ?? "IPv4-compatible (::/96)";
  // ::ffff:0:a.b.c.d (IPv4-translated, ::ffff:0:0/96, RFC 2765): judged as the IPv4 address.
  if (allZero(0, 4) && g[4] === 0xffff && g[5] === 0) return embedded(g[6]!, g[7]!) ?? null;
  // 64:ff9b::/96 (NAT64) embeds an IPv4 address too.
  if (g[0] === 0x64 && g[1] === 0xff9b && allZero(2, 6)) return embedded(g[6]!, g[7]!);
  // 64:ff9b:1::/48 (local-use NAT64, RFC 8215): translated inside a network, never public.
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return "local-use NAT64 (64:ff9b:1::/48)";
  // 2001::/32 (Teredo): tunnels to an obfuscated IPv4 address that cannot be judged here.
  if (g[0] === 0x2001 && g[1] === 0) return "Teredo (2001::/32)";
  // 2002::/16 (6to4): the IPv4 address is in groups 1–2.
  if (g[0] === 0x2002) return embedded(g[1]!, g[2]!);
  const first = g[0]!;
  if ((first & 0xffc0) === 0xfe80) return "link-local (fe80::/10)";
  if ((first & 0xffc0) === 0xfec0) return "site-local (fec0::/10)";
  if ((first & 0xfe00) === 0xfc00) return "unique-local (fc00::/7)";
  if ((first & 0xff00) === 0xff00) return "multicast (ff00::/8)";
  if (first === 0x2001 && g[1] === 0x0db8) return "documentation (2001:db8::/32)";
  if (first === 0x0100 && allZero(1, 4)) return "discard-only (100::/64)";
  return null;
}

/** Why `ip` (a literal IPv4 or IPv6 address) is not a public unicast address; null when it is. */
export function blockedAddressReason(ip: string): string | null {
  const bare = ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip;
  const family = isIP(bare.split("%")[0]!);
  if (family === 4) return blockedV4(v4ToInt(bare));
  if (family === 6) return blockedV6(bare);
  return "not an IP address";
}

export class UnsafeTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnsafeTargetError";
  }
}

/** The URL's host without IPv6 brackets. */
export const hostOf = (url: URL) => (url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname);

/**
 * The addresses to connect to for `url`: a literal address itself, or every address its name
 * resolves to. Throws UnsafeTargetError when any of them is refused (unless `allowPrivate`) or the
 * name does not resolve.
 */
export async function resolveTarget(url: URL, opts: { allowPrivate: boolean; resolve: HostResolver }): Promise<string[]> {
  const host = hostOf(url);
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = await opts.resolve(host);
    } catch (e) {
      throw new UnsafeTargetError(`the host ${host} does not resolve (${e instanceof Error ? e.message : String(e)})`);
    }
    if (addresses.length === 0) throw new UnsafeTargetError(`the host ${host} does not resolve`);
  }
  if (!opts.allowPrivate) {
    for (const a of addresses) {
      const why = blockedAddressReason(a);
      if (why) throw new UnsafeTargetError(isIP(host) ? `the address ${host} is ${why}` : `the host ${host} resolves to ${a}, ${why}`);
    }
  }
  return addresses;
}
