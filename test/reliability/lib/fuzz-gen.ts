// Generators of hostile requests for the fuzz test: random and malformed bodies (wrong types, huge
// strings, deep nesting, invalid UTF-8, duplicate keys, empty and truncated bodies, prototype keys),
// headers (content types, Idempotency-Key, credentials, cookies) and query strings (bad percent
// escapes, repeated and bracketed keys). Everything is drawn from a seeded Rng, so a case is
// reproducible from (seed, route, index).
import type { Rng } from "./prng";

export interface FuzzFixtures {
  licenseKey: string;
  productSlug: string;
  ids: string[];
}

export interface FuzzCase {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  /** Short human description of what was sent (for failure messages). */
  kind: string;
}

const FIELDS = [
  "license_key", "identifier", "identifier_type", "label", "feature", "quantity", "metadata", "token",
  "platform", "version", "channel", "email", "role", "seat_id", "session_id", "product_id", "plan_id",
  "limit", "expires_at", "code", "name", "slug", "fingerprint", "signature",
];
const QUERY_KEYS = ["platform", "channel", "limit", "version", "license_key", "token", "expires", "signature", "sig", "cursor", "product_id", "download"];
const PLATFORMS = ["darwin-arm64", "darwin-x64", "windows-arm64", "windows-x64", "linux-arm64", "linux-x64", "linux-armhf"];
const CHANNELS = ["stable", "beta", "alpha", "dev"];
const CONTENT_TYPES = [
  "application/json", "application/json; charset=utf-8", "APPLICATION/JSON", "application/vnd.api+json",
  "application/json; charset=utf-16", "text/plain", "text/html", "application/xml",
  "application/x-www-form-urlencoded", "multipart/form-data; boundary=fuzz", "multipart/form-data",
  "application/octet-stream", "", ";;;", "application/json;;charset", "*/*",
];
const PRINTABLE = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join("");
const LATIN1 = PRINTABLE + Array.from({ length: 96 }, (_, i) => String.fromCharCode(0xa0 + i)).join("");
const UNICODE = ["ü", "€", "😀", "\u0000", "\u200b", "\ud800", "\uffff", "\u202e", "ﷺ", "𝕂", "\n", "\t", "\"", "\\", "'"];
const enc = new TextEncoder();

/** Percent-encodes every byte outside [A-Za-z0-9-_.~]; lone surrogates become U+FFFD (unlike encodeURIComponent, never throws). */
function pct(s: string): string {
  let out = "";
  for (const b of enc.encode(s)) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

export class FuzzGen {
  constructor(
    private readonly rng: Rng,
    private readonly fx: FuzzFixtures,
  ) {}

  // --- scalar values ----------------------------------------------------------------------

  randomString(max = 40): string {
    const r = this.rng;
    switch (r.int(0, 6)) {
      case 0:
        return "";
      case 1:
        return r.string(r.int(1, max), PRINTABLE);
      case 2:
        return Array.from({ length: r.int(1, 8) }, () => r.pick(UNICODE)).join("");
      case 3:
        return " ".repeat(r.int(1, 5));
      case 4:
        return r.hex(r.pick([16, 63, 64, 65, 128]));
      case 5:
        return r.string(r.int(1, max)) + r.pick(UNICODE);
      default:
        return r.string(r.int(1, max), "ABCDEFGHJKLMNPQRSTUVWXYZ23456789-");
    }
  }

  /** Mostly-invalid, sometimes valid license keys: the credential every public route reads. */
  licenseKey(): string {
    const r = this.rng;
    const k = this.fx.licenseKey;
    switch (r.int(0, 7)) {
      case 0:
        return k;
      case 1:
        return k.toLowerCase();
      case 2:
        return `  ${k}  `;
      case 3:
        return k.slice(0, r.int(0, k.length - 1));
      case 4:
        return k + r.string(r.int(1, 8));
      case 5:
        return k.replace(/-/g, "");
      case 6:
        return `KW-${r.string(8, "ABCDEFGHJKLMNPQRSTUVWXYZ23456789")}-${r.string(8)}-${r.string(8)}-${r.string(8)}`;
      default:
        return this.randomString();
    }
  }

  value(depth = 0): unknown {
    const r = this.rng;
    switch (r.int(0, 13)) {
      case 0:
        return this.randomString();
      case 1:
        return this.licenseKey();
      case 2:
        return r.pick([0, -1, 1, 2 ** 31, 2 ** 53 + 1, -(2 ** 63), 1.5, 1e308, -0, Number.MAX_SAFE_INTEGER]);
      case 3:
        return r.chance(0.5);
      case 4:
        return null;
      case 5:
        return depth < 3 ? Array.from({ length: r.int(0, 4) }, () => this.value(depth + 1)) : [];
      case 6:
        return depth < 3 ? this.object(depth + 1) : {};
      case 7:
        return r.pick(PLATFORMS.concat(["linux", "LINUX-X64", "darwin-aarch64"]));
      case 8:
        return r.pick(CHANNELS.concat(["STABLE", "nightly", ""]));
      case 9:
        return r.pick(this.fx.ids.concat(["00000000-0000-0000-0000-000000000000", "not-a-uuid"]));
      case 10:
        return "x".repeat(r.pick([256, 257, 4096, 100_000]));
      case 11:
        return r.pick(["1", "-1", "0", "1e3", "NaN", "Infinity", "true", "null", "[]", "{}"]);
      case 12:
        return `${r.string(6)}@${r.string(5)}.test`;
      default:
        return r.pick(["device", "user", "admin", "member", "owner"]);
    }
  }

  object(depth = 0): Record<string, unknown> {
    const r = this.rng;
    const out: Record<string, unknown> = {};
    for (let i = r.int(0, 6); i > 0; i--) out[r.chance(0.85) ? r.pick(FIELDS) : this.randomString(12)] = this.value(depth);
    return out;
  }

  // --- bodies -----------------------------------------------------------------------------

  body(): { bytes: Uint8Array; kind: string; contentType?: string } {
    const r = this.rng;
    const json = (v: unknown, kind: string) => ({ bytes: enc.encode(JSON.stringify(v)), kind });
    const raw = (s: string, kind: string) => ({ bytes: enc.encode(s), kind });
    switch (r.int(0, 15)) {
      case 0:
      case 1: {
        // Plausible shape with one hostile field: reaches past validation into the verbs.
        const o: Record<string, unknown> = { license_key: this.licenseKey(), identifier: this.randomString(), feature: r.pick(["seats", "api-calls", ""]) };
        o[r.pick(FIELDS)] = this.value();
        return json(o, "plausible object");
      }
      case 2:
      case 3:
        return json(this.object(), "random object");
      case 4:
        return json(r.pick<unknown>([[], [this.object()], "string", 42, null, true, -1.5]), "wrong top-level type");
      case 5:
        return json({ [r.pick(FIELDS)]: "A".repeat(100_000), license_key: this.licenseKey() }, "100 KB string");
      case 6: {
        const depth = 1000;
        return r.chance(0.5)
          ? raw("[".repeat(depth) + "]".repeat(depth), "1000-deep arrays")
          : raw('{"a":'.repeat(depth) + "1" + "}".repeat(depth), "1000-deep objects");
      }
      case 7: {
        const f = r.pick(FIELDS);
        return raw(`{"${f}":${JSON.stringify(this.value())},"${f}":${JSON.stringify(this.value())},"license_key":"${this.fx.licenseKey}","license_key":{}}`, "duplicate keys");
      }
      case 8: {
        // Invalid UTF-8 inside a JSON string: lone continuation bytes, overlong, truncated sequences.
        const bad = r.pick([[0xff], [0xfe, 0xff], [0xc3, 0x28], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xc0, 0xaf], [0xed, 0xa0, 0x80]]);
        const head = enc.encode(`{"license_key":"${this.fx.licenseKey}","identifier":"`);
        const tail = enc.encode(`","token":"x"}`);
        return { bytes: new Uint8Array([...head, ...bad, ...tail]), kind: "invalid UTF-8" };
      }
      case 9:
        return { bytes: new Uint8Array(0), kind: "empty body" };
      case 10: {
        const s = JSON.stringify(this.object());
        return raw(s.slice(0, r.int(0, Math.max(0, s.length - 1))), "truncated JSON");
      }
      case 11:
        return raw(
          r.pick(["\ufeff{}", "{'license_key': 'x'}", '{"a":1,}', "NaN", '{"a": NaN}', "// c\n{}", "{}{}", "undefined", '"\\ud800"', "\u0000", "{" + " ".repeat(10_000)]),
          "non-standard JSON",
        );
      case 12:
        return raw(r.pick(['{"__proto__":{"admin":true,"license_key":"x"}}', '{"constructor":{"prototype":{"polluted":1}}}', '{"toString":1,"valueOf":"x","hasOwnProperty":null}']), "prototype keys");
      case 13:
        return { bytes: enc.encode(`license_key=${pct(this.fx.licenseKey)}&identifier=x`), kind: "form body", contentType: "application/x-www-form-urlencoded" };
      case 14:
        return { bytes: r.bytes(r.int(1, 512)), kind: "random bytes" };
      default:
        return raw(`{"quantity":${r.pick(["1e309", "-0", "9007199254740993", "0.1", "-1", "1E2", "0x10", "01"])},"license_key":"${this.fx.licenseKey}","feature":"f"}`, "odd numbers");
    }
  }

  // --- URL --------------------------------------------------------------------------------

  param(): string {
    const r = this.rng;
    switch (r.int(0, 11)) {
      case 0:
      case 1:
        return this.fx.productSlug;
      case 2:
        return r.pick(this.fx.ids);
      case 3:
        return `${r.hex(8)}-${r.hex(4)}-7${r.hex(3)}-8${r.hex(3)}-${r.hex(12)}`;
      case 4:
        return r.string(r.int(1, 20), "abcdefghijklmnopqrstuvwxyz-0123456789");
      case 5:
        return "a".repeat(r.pick([64, 65, 10_000]));
      case 6:
        return r.pick(["%ff%fe", "%00", "%zz", "%E0%A4%A", "%", "%%", "%C0%AF"]);
      case 7:
        return r.pick(["..%2F..%2Fetc%2Fpasswd", "%2e%2e", "..", "."]);
      case 8:
        return pct(Array.from({ length: r.int(1, 5) }, () => r.pick(UNICODE)).join(""));
      case 9:
        return r.pick(["null", "undefined", "-1", "1e999", "true", "[]", "%20"]);
      case 10:
        return r.hex(64);
      default:
        return pct(this.randomString(30));
    }
  }

  query(): string {
    const r = this.rng;
    const parts: string[] = [];
    for (let i = r.int(0, 5); i > 0; i--) {
      const key = r.chance(0.8) ? r.pick(QUERY_KEYS) : this.randomQueryToken();
      const value = (() => {
        switch (r.int(0, 9)) {
          case 0:
            return r.pick(PLATFORMS);
          case 1:
            return r.pick(CHANNELS);
          case 2:
            return String(r.pick([0, 1, 20, 100, 101, -1, 1e9, 1.5]));
          case 3:
            return r.pick(["", "abc", "1e3", "NaN", "0x10", "%20"]);
          case 4:
            return r.pick(["%ff", "%zz", "%E0%A4%A", "%", "%00", "%C0%AF"]);
          case 5:
            return pct(this.licenseKey());
          case 6:
            return "x".repeat(r.pick([1000, 100_000]));
          case 7:
            return pct(this.randomString());
          case 8:
            return r.hex(64);
          default:
            return this.randomQueryToken();
        }
      })();
      const shape = r.int(0, 9);
      if (shape === 0) parts.push(key);
      else if (shape === 1) parts.push(`${key}[]=${value}`, `${key}[]=${value}`);
      else if (shape === 2) parts.push(`${key}[a]=${value}`);
      else if (shape === 3) parts.push(`${key}=${value}`, `${key}=${value}x`);
      else parts.push(`${key}=${value}`);
    }
    if (r.chance(0.05)) parts.push("&&", "=", "==x");
    return parts.length ? `?${parts.join("&")}` : r.chance(0.1) ? "?" : "";
  }

  private randomQueryToken(): string {
    return pct(this.randomString(12)) || "k";
  }

  // --- headers ----------------------------------------------------------------------------

  headers(): Record<string, string> {
    const r = this.rng;
    const h: Record<string, string> = {};
    if (r.chance(0.85)) h["content-type"] = r.chance(0.6) ? "application/json" : r.pick(CONTENT_TYPES);
    if (r.chance(0.4)) {
      // Spec limit: 256 characters; probe both sides of it and odd characters.
      const len = r.pick([0, 1, 16, 255, 256, 257, 300, r.int(1, 400)]);
      h["idempotency-key"] = r.string(len, r.chance(0.7) ? PRINTABLE : LATIN1);
    }
    if (r.chance(0.25)) {
      h.authorization = r.pick([
        `Bearer ${r.string(r.int(0, 60), PRINTABLE)}`,
        `License ${this.licenseKey()}`,
        `Basic ${btoa(r.string(10))}`,
        "Bearer",
        r.string(r.int(0, 40), LATIN1),
      ]);
    }
    if (r.chance(0.25)) h.cookie = r.pick([`session=${r.string(r.int(0, 80), PRINTABLE.replace(";", ""))}`, `session=${r.hex(64)}`, "session=", r.string(40, LATIN1), "a=b; session=x; session=y"]);
    if (r.chance(0.15)) h["x-forwarded-for"] = r.pick(["1.2.3.4", "::1", r.string(30, PRINTABLE), "1.1.1.1, 2.2.2.2", ""]);
    if (r.chance(0.15)) h["x-request-id"] = r.string(r.int(0, 200), PRINTABLE);
    if (r.chance(0.1)) h.accept = r.pick(["application/xml", "*/*", "text/html", r.string(20, PRINTABLE)]);
    if (r.chance(0.1)) h["accept-encoding"] = r.pick(["gzip", "br", "identity;q=0", "*"]);
    // A header value is a ByteString without controls: anything else cannot even be sent.
    for (const k of Object.keys(h)) h[k] = h[k]!.replace(/[^\x20-\x7e\xa0-\xff]/g, "?");
    return h;
  }

  /**
   * A valid request for the route with exactly one part broken (a query value, a body field, or a
   * header). Purely random cases rarely get past validation; these reach the handlers.
   */
  nearValid(method: string, path: string): FuzzCase {
    const r = this.rng;
    const filled = path.replace(/:slug\b/g, this.fx.productSlug).replace(/:[^/]+/g, () => r.pick(this.fx.ids));
    const query: Record<string, string> = { platform: r.pick(PLATFORMS), channel: r.pick(CHANNELS), limit: String(r.int(1, 100)) };
    const body: Record<string, unknown> = {
      license_key: this.fx.licenseKey,
      identifier: `device-${r.int(0, 5)}`,
      feature: "f",
      quantity: r.int(1, 3),
      platform: r.pick(PLATFORMS),
      channel: r.pick(CHANNELS),
    };
    const headers: Record<string, string> = { "content-type": "application/json" };
    const target = r.int(0, 2);
    if (target === 0) query[r.pick(Object.keys(query))] = r.pick(["", "0", "101", "-1", "1.5", "%ff", "x".repeat(300), pct(this.randomString())]);
    else if (target === 1) body[r.pick(Object.keys(body))] = this.value();
    else Object.assign(headers, this.headers());
    const url = `${filled}?${new URLSearchParams(query).toString()}`;
    if (method === "GET" || method === "HEAD") return { method, url, headers, kind: "near-valid" };
    return { method, url, headers, body: new TextEncoder().encode(JSON.stringify(body)), kind: "near-valid" };
  }

  /** One request for `method path` (path with :params). */
  request(method: string, path: string): FuzzCase {
    const r = this.rng;
    if (r.chance(0.3)) return this.nearValid(method, path);
    const filled = path.replace(/:[^/]+/g, () => this.param()).replace(/\*/g, () => this.param());
    const url = filled + this.query();
    const headers = this.headers();
    if (method === "GET" || method === "HEAD") {
      return { method, url, headers, kind: "no body" };
    }
    const b = this.body();
    if (b.contentType && r.chance(0.7)) headers["content-type"] = b.contentType;
    return { method, url, headers, body: b.bytes, kind: b.kind };
  }
}
