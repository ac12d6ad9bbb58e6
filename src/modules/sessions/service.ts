// TEMPORARY stub of the sessions contract (/work/wt/_brief/sessions-contract.md) so the seats branch
// compiles before the sessions core lands on main; replaced by main's file on merge.
import type { Deps, Repos } from "../../deps";
import type { User } from "../users/repo";
import { AppError } from "../../shared/errors";

export type SignInMethod = "otp" | "dev" | "invite" | `oauth:${string}`;
export interface SignedIn {
  user: User;
  sessionId: string;
}

export async function signIn(
  _deps: Deps,
  _repos: Repos,
  _input: { email: string; method: SignInMethod; ip: string | null; userAgent: string | null },
): Promise<{ user: User; setCookie: string }> {
  throw new AppError("INTERNAL_ERROR", { message: "sessions core not merged yet" });
}
