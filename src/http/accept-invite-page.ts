// The portal's invite page (GET /portal/accept-invite), where the link in a seat invite email lands:
// `<BASE_URL>/portal/accept-invite#token=<64 hex>`. The token rides in the URL fragment, which a
// browser never sends to a server, so it stays out of access logs and Referer headers. The page's
// script reads it, asks before accepting (a mail scanner that follows links must not consume the
// invite), POSTs it to /api/v1/invites/accept on this origin and shows the answer; the answer sets
// the session cookie.
//
// Self-contained and strict: no external assets, the script and the style sheet are files of their
// own (no 'unsafe-inline'), and the Content-Security-Policy allows this origin only.
import { Elysia } from "elysia";

export const ACCEPT_INVITE_PATH = "/portal/accept-invite";

export const ACCEPT_INVITE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  // data: for the empty favicon (<link rel="icon" href="data:,">), which spares a /favicon.ico request.
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Accept your invite</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="accept-invite/style.css">
</head>
<body>
<main>
<h1>Accept your invite</h1>
<p id="intro">You were invited to use a license. Accepting signs you in with the invited email address.</p>
<button id="accept" type="button" hidden>Accept invite</button>
<p id="status" role="status" aria-live="polite"></p>
</main>
<script src="accept-invite/app.js"></script>
</body>
</html>
`;

const STYLE = `body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
main{max-width:32rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:12px;box-shadow:0 1px 3px rgba(0,0,0,.08)}
h1{font-size:1.4rem;margin:0 0 1rem}
button{font:inherit;padding:.6rem 1.4rem;border:0;border-radius:8px;background:#2453d6;color:#fff;cursor:pointer}
button:disabled{opacity:.6;cursor:default}
.error{color:#b42318}.ok{color:#067647}
`;

// ES5, no dependencies. The API address is relative to the page, so it works under a BASE_URL path prefix.
const SCRIPT = `"use strict";
(function () {
  var button = document.getElementById("accept");
  var status = document.getElementById("status");
  var match = /(?:^#|&)token=([0-9A-Fa-f]{64})(?:&|$)/.exec(window.location.hash);
  var token = match ? match[1].toLowerCase() : null;
  // Keep the token out of the address bar and the history once it has been read.
  if (window.history && window.history.replaceState) window.history.replaceState(null, "", window.location.pathname);
  function show(text, kind) { status.textContent = text; status.className = kind || ""; }
  if (!token) { show("This link has no invite token. Open the link from your invite email again.", "error"); return; }
  button.hidden = false;
  button.addEventListener("click", function () {
    button.disabled = true;
    show("Accepting\\u2026");
    fetch(new URL("../api/v1/invites/accept", window.location.href).toString(), {
      method: "POST",
      credentials: "include",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ token: token })
    }).then(function (res) {
      return res.json().then(function (body) { return { status: res.status, body: body }; }, function () { return { status: res.status, body: null }; });
    }).then(function (r) {
      if (r.body && r.body.success) {
        var d = r.body.data;
        button.hidden = true;
        show("Done: you joined " + (d.product_name || "the license") + " as " + d.role + ", signed in as " + d.email + ".", "ok");
      } else if (r.status === 429) {
        button.disabled = false;
        show("Too many attempts from your network. Wait a minute and try again.", "error");
      } else {
        button.hidden = true;
        show("This invite is not valid: it may have expired, been used already, or been withdrawn. Ask the license owner to invite you again.", "error");
      }
    }, function () {
      button.disabled = false;
      show("The server could not be reached. Check your connection and try again.", "error");
    });
  });
})();
`;

export function acceptInvitePage() {
  const securityHeaders = {
    "content-security-policy": ACCEPT_INVITE_CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
  };
  const serve = (body: string, type: string, cache: string) => () =>
    new Response(body, { headers: { "content-type": type, "cache-control": cache, ...securityHeaders } });
  const hide = { detail: { hide: true } };
  return new Elysia({ name: "keyward/accept-invite-page" })
    .get(ACCEPT_INVITE_PATH, serve(PAGE, "text/html; charset=utf-8", "no-store"), hide)
    .get(`${ACCEPT_INVITE_PATH}/app.js`, serve(SCRIPT, "text/javascript; charset=utf-8", "public, max-age=3600"), hide)
    .get(`${ACCEPT_INVITE_PATH}/style.css`, serve(STYLE, "text/css; charset=utf-8", "public, max-age=3600"), hide);
}
