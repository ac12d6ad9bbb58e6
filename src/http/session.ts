// TEMPORARY stub of the sessions contract (/work/wt/_brief/sessions-contract.md) so the seats branch
// compiles before the sessions core lands on main; replaced by main's file on merge.
import { Elysia } from "elysia";
import type { Deps } from "../deps";
import type { SignedIn } from "../modules/sessions/service";
import { AppError } from "../shared/errors";

export function sessionAuth(_deps: Deps) {
  return new Elysia({ name: "keyward/session-auth" }).macro({
    signedIn(enabled: boolean) {
      return {
        async resolve(): Promise<{ signedIn: SignedIn }> {
          if (enabled) throw new AppError("UNAUTHORIZED");
          throw new AppError("UNAUTHORIZED");
        },
      };
    },
  });
}

export function assertSameOrigin(request: Request, baseUrl: string): void {
  const origin = request.headers.get("origin");
  if (origin !== null && origin !== new URL(baseUrl).origin) throw new AppError("FORBIDDEN");
}
