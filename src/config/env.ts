// Readers of one environment variable each: trimmed, validated, or a ConfigError naming the variable.
// Only src/config.ts and its parts (src/config/) call them, with the record src/config.ts was given.
import { parsePgUrl } from "../db/pg-url";
import { parseTrustProxy, TrustProxyParseError, type TrustProxy } from "../http/trusted-proxies";

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`Invalid configuration: ${variable} ${reason}`);
    this.name = "ConfigError";
  }
}

export type Env = Record<string, string | undefined>;

const HEX64 = /^[0-9a-fA-F]{64}$/;

export function str(env: Env, name: string, fallback: string): string {
  const v = env[name];
  return v === undefined || v.trim() === "" ? fallback : v.trim();
}

export function optional(env: Env, name: string): string | null {
  const v = env[name];
  return v === undefined || v.trim() === "" ? null : v.trim();
}

export function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = optional(env, name);
  if (raw === null) return fallback;
  if (!/^-?\d+$/.test(raw)) throw new ConfigError(name, `must be an integer, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

export function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = optional(env, name);
  if (raw === null) return fallback;
  const v = raw.toLowerCase();
  if (["1", "true", "yes", "on"].includes(v)) return true;
  if (["0", "false", "no", "off"].includes(v)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

export function trustProxy(env: Env, name: string): TrustProxy {
  try {
    return parseTrustProxy(optional(env, name));
  } catch (e) {
    if (e instanceof TrustProxyParseError) throw new ConfigError(name, e.message);
    throw e;
  }
}

export function oneOf<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const raw = optional(env, name);
  if (raw === null) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.join(", ")}, got "${raw}"`);
  }
  return raw as T;
}

export function hex64(env: Env, name: string): string | null {
  const raw = optional(env, name);
  if (raw === null) return null;
  if (!HEX64.test(raw)) throw new ConfigError(name, "must be 64 hexadecimal characters (32 bytes)");
  return raw.toLowerCase();
}

/** A comma-separated list of email addresses, trimmed and lower-cased (ASCII); empty entries skipped. */
export function emailList(env: Env, name: string): string[] {
  const out: string[] = [];
  for (const part of (optional(env, name) ?? "").split(",")) {
    const email = part.trim().replace(/[A-Z]+/g, (m) => m.toLowerCase());
    if (email === "") continue;
    if (!/^[^\s@,]+@[^\s@,]+$/.test(email) || email.length > 320) throw new ConfigError(name, `must list email addresses, got "${email}"`);
    if (!out.includes(email)) out.push(email);
  }
  return out;
}

/** A postgres:// or postgresql:// URL with a host, or null when unset. */
export function postgresUrl(env: Env, name: string): string | null {
  const raw = optional(env, name);
  if (raw === null) return null;
  // Several hosts (db1:5432,db2:5432) are postgres.js's failover list (docs/operations.md).
  const parsed = parsePgUrl(raw);
  // Never echo the value: it usually holds a password.
  if ("error" in parsed) throw new ConfigError(name, parsed.error);
  return raw;
}

/** An smtp:// or smtps:// URL with a host (nodemailer's URL form), or null when unset. */
export function smtpUrl(env: Env, name: string): string | null {
  const raw = optional(env, name);
  if (raw === null) return null;
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== "smtp:" && url.protocol !== "smtps:") || url.hostname === "") {
    // Never echo the value: it usually holds a password.
    throw new ConfigError(name, "must be an smtp:// or smtps:// URL with a host, like smtp://user:pass@mail.example.com:587");
  }
  return raw;
}

// A bare address, or a display name followed by <address>. No line breaks, so the value can never
// add mail headers (the same shape the From setting of the settings module accepts).
const MAIL_ADDRESS = "[^\\s<>@\"]+@[^\\s<>@\"]+\\.[^\\s<>@\"]+";
const MAIL_FROM = new RegExp(`^(?:${MAIL_ADDRESS}|[^\\r\\n<>]{1,200} <${MAIL_ADDRESS}>)$`);

export function mailFrom(env: Env, name: string): string | null {
  const raw = optional(env, name);
  if (raw === null) return null;
  if (!MAIL_FROM.test(raw)) throw new ConfigError(name, `must be "addr@example.com" or "Name <addr@example.com>", got "${raw}"`);
  return raw;
}
