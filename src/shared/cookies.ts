// Reading request cookies (the session cookie, the OAuth flow cookie, the sign-in attempt cookie),
// and the scope of a cookie limited to some routes.

/** The value of cookie `name` in a Cookie request header, or null. */
export function cookieValue(header: string | null | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

export interface CookieScope {
  /** Path the cookie is sent to: some routes under BASE_URL's path. */
  path: string;
  /** Secure when BASE_URL is https. */
  secure: boolean;
}

/** A cookie for the routes under `routesPath` (e.g. "/api/v1/auth/oauth") of the site at `baseUrl`. */
export function cookieScope(baseUrl: string, routesPath: string): CookieScope {
  const url = new URL(baseUrl);
  return { path: `${url.pathname.replace(/\/+$/, "")}${routesPath}`, secure: url.protocol === "https:" };
}

/** The Set-Cookie value of an HttpOnly cookie limited to `scope`; Max-Age=0 clears it. */
export function scopedCookie(name: string, value: string, maxAgeSeconds: number, scope: CookieScope, sameSite: "Lax" | "Strict"): string {
  return `${name}=${value}; Path=${scope.path}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=${sameSite}${scope.secure ? "; Secure" : ""}`;
}
