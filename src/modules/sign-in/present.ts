import type { Config } from "../../config";
import type { SignedIn } from "../sessions/service";
import type { Session } from "../sessions/repo";
import type { User } from "../users/repo";
import { effectiveRole } from "../users/domain";

export function presentUser(user: User, config: Pick<Config, "adminEmails">) {
  return {
    id: user.id,
    email: user.email,
    role: effectiveRole(user, config.adminEmails),
    created_at: user.createdAt.toISOString(),
    last_sign_in_at: user.lastSignInAt?.toISOString() ?? null,
  };
}

export function presentSession(session: Session) {
  return {
    id: session.id,
    method: session.method,
    created_at: session.createdAt.toISOString(),
    expires_at: session.idleExpiresAt.toISOString(),
    absolute_expires_at: session.absoluteExpiresAt.toISOString(),
  };
}

export function presentMe(signedIn: Pick<SignedIn, "user" | "session">, config: Pick<Config, "adminEmails">) {
  return { user: presentUser(signedIn.user, config), session: presentSession(signedIn.session) };
}
