// API keys: `kw_` + 40 base62 characters (≈238 bits), shown once; only an HMAC lookup hash is stored.
import { randomBytes } from "node:crypto";
import type { Deps } from "../../deps";
import { hmacSha256Hex } from "../../crypto/hash";
import { AppError } from "../../shared/errors";
import { newId } from "../../shared/ids";
import { MINUTE } from "../../shared/clock";
import { assertSystemWide, SCOPES, type Actor, type Credential, type Scope } from "../../shared/actor";
import type { ApiKeyRecord } from "./repo";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const KEY_SHAPE = /^kw_[0-9A-Za-z]{40}$/;

function randomKey(): string {
  let out = "kw_";
  while (out.length < 43) {
    for (const b of randomBytes(48)) {
      if (b >= 248) continue; // 248 = 4 × 62: reject to keep symbols uniform
      out += ALPHABET[b % 62];
      if (out.length === 43) break;
    }
  }
  return out;
}

export function hashApiKey(deps: Pick<Deps, "secrets">, key: string): string {
  return hmacSha256Hex(deps.secrets.subkey("secretLookup"), `api-key:${key}`);
}

export interface CreateApiKeyInput {
  name: string;
  scopes: Scope[];
  productId: string | null;
}

export async function createApiKey(deps: Deps, actor: Actor, input: CreateApiKeyInput): Promise<{ record: ApiKeyRecord; key: string }> {
  assertSystemWide(actor);
  const scopes = [...new Set(input.scopes)].filter((s): s is Scope => (SCOPES as readonly string[]).includes(s));
  if (input.productId !== null && !await deps.repos.products.findById(input.productId)) {
    throw new AppError("VALIDATION_ERROR", { details: { fields: { product_id: "unknown product" } } });
  }
  const key = randomKey();
  const now = deps.clock.now();
  const record: ApiKeyRecord = {
    id: newId(),
    name: input.name,
    keyHash: hashApiKey(deps, key),
    keyPrefix: key.slice(0, 10),
    scopes,
    productId: input.productId,
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null,
  };
  const audit = {
    actor,
    action: "api_key.create",
    entityType: "api_key",
    entityId: record.id,
    productId: input.productId,
    changes: { name: input.name, scopes, product_id: input.productId },
    at: now,
  };
  await deps.db.transaction(async ({ repos }) => {
    await repos.apiKeys.create(record);
    await repos.outbox.writeEffects({ audit });
  });
  return { record, key };
}

export async function listApiKeys(deps: Deps, actor: Actor): Promise<ApiKeyRecord[]> {
  assertSystemWide(actor);
  return await deps.repos.apiKeys.list();
}

export async function revokeApiKey(deps: Deps, actor: Actor, id: string): Promise<ApiKeyRecord> {
  assertSystemWide(actor);
  const now = deps.clock.now();
  // Revoked and audited once: a second revoke returns the key as it is and records nothing.
  const r = await deps.db.transaction(async ({ repos }) => {
    const out = await repos.apiKeys.revoke(id, now);
    if (out?.revoked) await repos.outbox.writeEffects({ audit: { actor, action: "api_key.revoke", entityType: "api_key", entityId: id, productId: null, changes: null, at: now } });
    return out;
  });
  if (!r) throw new AppError("NOT_FOUND", { message: "API key not found." });
  return r.key;
}

/**
 * The credential of a presented API key (the admin guard's resolver in src/http/auth.ts calls this
 * with the bearer token); UNAUTHORIZED when it is not a live key.
 */
export async function authenticateApiKey(deps: Deps, token: string): Promise<Credential> {
  // Shape check first: garbage never reaches the database. The lookup is by keyed hash, so no
  // timing difference reveals how much of a key matched.
  const record = KEY_SHAPE.test(token) ? await deps.repos.apiKeys.findByHash(hashApiKey(deps, token)) : null;
  if (!record || record.revokedAt) throw new AppError("UNAUTHORIZED", { message: "Invalid API key." });
  const now = deps.clock.now();
  // last_used_at is informative; write it at most once a minute per key to keep reads write-free.
  if (!record.lastUsedAt || now.getTime() - record.lastUsedAt.getTime() > MINUTE) await deps.repos.apiKeys.touch(record.id, now);
  return { type: "api_key", id: record.id, scopes: new Set(record.scopes), productId: record.productId };
}
