import { t } from "../../http/schema";

export const Email = t.String({ format: "email", maxLength: 320, description: "Matched case-insensitively" });

export const CodeRequestBody = t.Object({ email: Email }, { additionalProperties: false });
export const CodeVerifyBody = t.Object(
  { email: Email, code: t.String({ pattern: "^[0-9]{6}$", description: "The 6-digit code from the email" }) },
  { additionalProperties: false },
);
export const DevLoginBody = t.Object({ email: Email }, { additionalProperties: false });

export const CodeRequested = t.Object(
  {
    message: t.String(),
    expires_in_seconds: t.Integer({ description: "How long a code sent now stays valid" }),
  },
  { additionalProperties: false },
);

export const MeUser = t.Object(
  {
    id: t.String({ format: "uuid" }),
    email: t.String(),
    role: t.Union([t.Literal("admin"), t.Literal("support"), t.Literal("viewer"), t.Null()], {
      description: "Admin role in force (ADMIN_EMAILS addresses are always admin); null for customers",
    }),
    created_at: t.String({ format: "date-time" }),
    last_sign_in_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
  },
  { additionalProperties: false, title: "SignedInUser" },
);

export const MeSession = t.Object(
  {
    id: t.String({ format: "uuid" }),
    method: t.String({ description: "otp, dev, invite or oauth:<provider>" }),
    created_at: t.String({ format: "date-time" }),
    expires_at: t.String({ format: "date-time", description: "Idle expiry (slides forward while used), never past the absolute one" }),
    absolute_expires_at: t.String({ format: "date-time" }),
  },
  { additionalProperties: false },
);

export const Me = t.Object({ user: MeUser, session: MeSession }, { additionalProperties: false });
export const SignedOut = t.Object({ sessions_ended: t.Integer() }, { additionalProperties: false });
