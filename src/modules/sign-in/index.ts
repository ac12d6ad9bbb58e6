// /auth routes: email one-time code, development login, who am I, sign out (here and everywhere).
// Request shapes are ours (spec: "Request shapes of the /auth/* endpoints: not shown").
import { Elysia } from "elysia";
import type { Deps } from "../../deps";
import { Envelope, errors, ok } from "../../http/envelope";
import { requestContext } from "../../http/request-context";
import { assertSameOrigin, sessionAuth, sessionOf } from "../../http/session";
import { clearedSessionCookie, endAllSessions, endSession } from "../sessions/service";
import { devLogin, requestSignInCode, verifySignInCode } from "./service";
import { CODE_GUESSES_PER_IP, CODE_MAX_ATTEMPTS, CODE_REQUESTS_PER_IP, CODE_TTL_MS, CODES_PER_ADDRESS } from "./domain";
import { CodeRequestBody, CodeRequested, CodeVerifyBody, DevLoginBody, Me, SignedOut } from "./model";
import { presentMe } from "./present";

const detail = (summary: string, description: string) => ({ tags: ["Sign-in"], summary, description });
const CODE_REQUESTED = "If this address can sign in, a code is on its way. It expires in 10 minutes.";

export function signInRoutes(deps: Deps) {
  const app = new Elysia({ name: "keyward/sign-in" })
    .use(sessionAuth(deps))
    .post(
      "/auth/otp/request",
      async ({ body, request, set }) => {
        assertSameOrigin(request, deps.config.baseUrl);
        const out = await requestSignInCode(deps, { email: body.email, ip: requestContext(request).ip, cookie: request.headers.get("cookie") });
        set.headers["set-cookie"] = out.setCookie;
        return ok({ message: CODE_REQUESTED, expires_in_seconds: CODE_TTL_MS / 1000 });
      },
      {
        body: CodeRequestBody,
        response: { 200: Envelope(CodeRequested), ...errors(403, 429) },
        detail: detail(
          "Email a one-time sign-in code",
          `Always the same 200, whether or not the address is known (no account enumeration), with the cookie \`sign_in_attempt\` (HttpOnly, SameSite=Strict, Path=/api/v1/auth/otp, ${CODE_TTL_MS / 1000} s): the code only works from the browser that holds it, and a new request from that browser replaces its previous code. A code goes to users, license owners and ADMIN_EMAILS addresses; it has 6 digits, lasts ${CODE_TTL_MS / 60_000} minutes and allows ${CODE_MAX_ATTEMPTS} attempts. 429 RATE_LIMITED (with Retry-After) past ${CODE_REQUESTS_PER_IP} requests per minute from one client address, or past ${CODES_PER_ADDRESS} codes an hour for one address (from anyone).`,
        ),
      },
    )
    .post(
      "/auth/otp/verify",
      async ({ body, request, set }) => {
        assertSameOrigin(request, deps.config.baseUrl);
        const ctx = requestContext(request);
        const out = await verifySignInCode(deps, {
          email: body.email,
          code: body.code,
          ip: ctx.ip,
          userAgent: request.headers.get("user-agent"),
          cookie: request.headers.get("cookie"),
        });
        set.headers["set-cookie"] = [out.setCookie, out.clearAttemptCookie];
        return ok(presentMe(out, deps.config));
      },
      {
        body: CodeVerifyBody,
        response: { 200: Envelope(Me), ...errors(403, 429) },
        detail: detail(
          "Sign in with the emailed code",
          `Needs the \`sign_in_attempt\` cookie set by /auth/otp/request in this browser: the code is checked against that attempt only. Sets the \`session\` cookie and clears \`sign_in_attempt\`. 400 SIGN_IN_CODE_INVALID for a wrong, expired, used or exhausted code, or without the attempt cookie (the same answer for each); 429 RATE_LIMITED past ${CODE_GUESSES_PER_IP} guesses per minute from one client address.`,
        ),
      },
    )
    .get(
      "/auth/me",
      ({ signedIn }) => ok(presentMe(signedIn, deps.config)),
      {
        signedIn: true,
        response: { 200: Envelope(Me), ...errors(401) },
        detail: detail("The signed-in user and session", "401 UNAUTHORIZED when signed out."),
      },
    )
    .post(
      "/auth/logout",
      async ({ request, set }) => {
        const signedIn = await sessionOf(deps, request);
        const ended = signedIn ? ((await endSession(deps, signedIn.sessionId)) ? 1 : 0) : 0;
        set.headers["set-cookie"] = clearedSessionCookie(deps);
        return ok({ sessions_ended: ended });
      },
      {
        response: { 200: Envelope(SignedOut), ...errors(403) },
        detail: detail("Sign out", "Ends this session and clears the cookie; 200 also when already signed out."),
      },
    )
    .post(
      "/auth/logout-all",
      async ({ signedIn, set }) => {
        const ended = await endAllSessions(deps, signedIn.user.id);
        set.headers["set-cookie"] = clearedSessionCookie(deps);
        return ok({ sessions_ended: ended });
      },
      {
        signedIn: true,
        response: { 200: Envelope(SignedOut), ...errors(401, 403) },
        detail: detail("Sign out everywhere", "Ends every session of the signed-in user, on every device."),
      },
    );
  if (!deps.config.devLogin || deps.config.nodeEnv === "production") return app;
  // Not mounted at all unless DEV_LOGIN=true (404 like any unknown path); refused at boot in production.
  return app.post(
    "/auth/dev-login",
    async ({ body, request, set }) => {
      assertSameOrigin(request, deps.config.baseUrl);
      const out = await devLogin(deps, { email: body.email, ip: requestContext(request).ip, userAgent: request.headers.get("user-agent") });
      set.headers["set-cookie"] = out.setCookie;
      return ok(presentMe(out, deps.config));
    },
    {
      body: DevLoginBody,
      response: { 200: Envelope(Me), ...errors(403) },
      detail: detail("Development sign-in without proof (DEV_LOGIN=true only)", "Signs any address in. Absent unless DEV_LOGIN=true; never available with NODE_ENV=production."),
    },
  );
}
