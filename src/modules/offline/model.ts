import { t } from "../../http/schema";
import { identifierField } from "../license-api/model";
import { Instant } from "../../http/common-schemas";

export const offlineModels = (identifierMaxLength: number) => ({
  IssueOfflineTokenBody: t.Object(
    {
      identifier: identifierField(identifierMaxLength),
      expires_at: t.Optional(
        t.Union([t.Literal(""), Instant], {
          description: "RFC 3339 expiry of the token (seconds precision; must be in the future). Empty or omitted: perpetual (`exp` = 0)",
        }),
      ),
    },
    { additionalProperties: false, description: "The machine code (`identifier`) the token is bound to through `fpr`" },
  ),
});

export const OfflineTokenSchema = t.Object(
  {
    token: t.String({ description: "Signed token: base64url(payload).base64url(Ed25519 signature); verifies with GET /license/pubkey" }),
    fingerprint: t.String({ pattern: "^[0-9a-f]{16}$", description: "First 16 hex of SHA-256(\"<identifier>:<product_id>\"); the token's `fpr`" }),
    perpetual: t.Boolean({ description: "True when the token never expires (`exp` = 0)" }),
    expires_at: t.String({ description: "The token's expiry (RFC 3339, equal to `exp`); empty when perpetual" }),
  },
  { title: "OfflineToken" },
);

const DateTime = t.String({ format: "date-time" });

export const OfflineActivationParams = t.Object({ id: t.String({ format: "uuid" }), activation_id: t.String({ format: "uuid" }) });

export const OfflineActivationSchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    identifier: t.String({ description: "The machine code" }),
    fingerprint: t.String({ description: "16 hex, the token's `fpr`" }),
    expires_at: t.Union([DateTime, t.Null()], { description: "The token's expiry; null when perpetual" }),
    created_at: DateTime,
    created_by: t.Union([t.String(), t.Null()], { description: "The portal user who made it" }),
    cleared_at: t.Union([DateTime, t.Null()], { description: "Set when an admin cleared it; null while it stands" }),
    cleared_by: t.Union([t.String(), t.Null()], { description: "Id of the admin actor (API key or user) who cleared it" }),
  },
  { title: "OfflineActivation" },
);

export const OfflineActivationListSchema = t.Object({ items: t.Array(OfflineActivationSchema) });

export const PortalOfflineBody = t.Object({ license_key: t.String({ description: "Names the license (the session authenticates)" }) });
export const portalOfflineModels = (identifierMaxLength: number) => ({
  PortalOfflineActivateBody: t.Object({
    license_key: t.String({ description: "Names the license (the session authenticates)" }),
    identifier: identifierField(identifierMaxLength),
  }),
});

export const PortalOfflineViewSchema = t.Object(
  {
    license_id: t.String({ format: "uuid" }),
    offered: t.Boolean({
      description: "True iff the plan's portal_offline_activation setting is on and the plan is not floating (floating plans have no device activation). False: hide the option",
    }),
    available: t.Boolean({ description: "True when a new offline activation would be accepted now" }),
    activation: t.Union([OfflineActivationSchema, t.Null()], { description: "The live offline activation, or null" }),
  },
  { title: "PortalOfflineActivation" },
);

export const PortalOfflineActivatedSchema = t.Object(
  {
    token: OfflineTokenSchema.properties.token,
    fingerprint: OfflineTokenSchema.properties.fingerprint,
    perpetual: OfflineTokenSchema.properties.perpetual,
    expires_at: OfflineTokenSchema.properties.expires_at,
    activation: OfflineActivationSchema,
  },
  { title: "PortalOfflineActivated" },
);
