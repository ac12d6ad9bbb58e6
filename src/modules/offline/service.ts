// Admin-issued offline tokens (spec: Offline token issue). No activation is recorded (rule 5) and the
// token is not revocable (rule 3): the audit row and the event are the only trace of it.
import { randomBytes } from "node:crypto";
import type { Deps } from "../../deps";
import { AppError } from "../../shared/errors";
import type { Actor } from "../../shared/actor";
import { signToken } from "../../crypto/token";
import { getLicense } from "../licenses/service";
import { licenseEntitlements } from "../entitlements/service";
import { featureValues } from "../entitlements/domain";
import { offlineExpiry, offlineIssueRefusal, offlineTokenClaims } from "./domain";
import { offlineTokenIssued } from "./events";

export interface IssueOfflineTokenInput {
  /** The machine code, compared exactly (same limits as activation identifiers). */
  identifier: string;
  /** null = perpetual (`exp = 0`). */
  expiresAt: Date | null;
}

export interface OfflineToken {
  token: string;
  /** 16 hex: the token's `fpr`. */
  fingerprint: string;
  /** Unix seconds; 0 = perpetual. */
  exp: number;
}

const notFound = () => new AppError("NOT_FOUND", { message: "License not found." });

export async function issueOfflineToken(deps: Deps, actor: Actor, licenseId: string, input: IssueOfflineTokenInput): Promise<OfflineToken> {
  await getLicense(deps, actor, licenseId); // 404, or 403 PRODUCT_SCOPE_MISMATCH for a bound key
  const now = deps.clock.now();
  const exp = offlineExpiry(input.expiresAt, now);
  const access = await deps.repos.licenseAccess.findById(licenseId);
  if (!access) throw notFound();
  // Read before the write transaction (its callback cannot await), as activate does.
  const features = featureValues(await licenseEntitlements(deps, access));
  return await deps.repos.offlineTokens.issue(licenseId, (current) => {
    if (!current) throw notFound(); // deleted in between
    const refusal = offlineIssueRefusal(current, now);
    if (refusal) throw refusal;
    const key = deps.tokenKeys.active();
    const claims = offlineTokenClaims({
      access: current,
      identifier: input.identifier,
      features,
      now,
      exp,
      kid: key.kid,
      nonce: randomBytes(12).toString("base64url"),
    });
    const token = signToken(key.signer, claims);
    const issued = { identifier: input.identifier, fingerprint: claims.fpr, exp, kid: key.kid };
    return {
      result: { token, fingerprint: claims.fpr, exp },
      effects: {
        audit: {
          actor,
          action: "license.offline_token.issue",
          entityType: "license",
          entityId: current.license.id,
          productId: current.license.productId,
          // Who issued it is the audit row's actor; the token itself is not kept anywhere.
          changes: {
            before: null,
            after: {
              identifier: input.identifier,
              fingerprint: claims.fpr,
              perpetual: exp === 0,
              expires_at: exp === 0 ? null : new Date(exp * 1000).toISOString(),
              support_until: claims.sup === 0 ? null : new Date(claims.sup * 1000).toISOString(),
              kid: key.kid,
            },
          },
          at: now,
        },
        events: [offlineTokenIssued(current, issued, actor, now)],
      },
    };
  });
}
