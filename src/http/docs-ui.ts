// The browsable API documentation page (GET /api/v1/docs): Swagger UI from the pinned npm package
// swagger-ui-dist, served by Keyward itself. Nothing is loaded from a CDN, so the page works on a
// machine without internet. The two files are imported `with { type: "file" }`: under `bun run`
// that is their path in node_modules; `bun build --compile` embeds them in the executable and the
// path points inside it, so the compiled binary serves them with nothing beside it.
//
// The page carries a Content-Security-Policy that allows scripts, styles, images and fetches from
// this origin only (plus inline styles and data: images, which Swagger UI uses), so a browser
// refuses anything a future viewer version might try to load from elsewhere.
import { Elysia } from "elysia";
import bundlePath from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import cssPath from "swagger-ui-dist/swagger-ui.css" with { type: "file" };

export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

// The initializer is a file of its own (not an inline script), so script-src needs no 'unsafe-inline'.
// It reads the document's URL from the page; validatorUrl: null keeps Swagger UI from sending the
// document to its public validator.
const INIT_JS = `"use strict";
window.addEventListener("DOMContentLoaded", function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.getAttribute("data-url"),
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout"
  });
});
`;

export interface DocsUiOptions {
  /** Path of the page, e.g. /api/v1/docs; its assets are served under `${uiPath}/assets/`. */
  uiPath: string;
  /** Path of the OpenAPI document the page shows. */
  specPath: string;
  title: string;
}

export function docsUi(opts: DocsUiOptions) {
  const assets = `${opts.uiPath}/assets`;
  const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(opts.title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assets}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui" data-url="${escapeHtml(opts.specPath)}"></div>
<script src="${assets}/swagger-ui-bundle.js"></script>
<script src="${assets}/init.js"></script>
</body>
</html>
`;
  const securityHeaders = {
    "content-security-policy": DOCS_CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
  };
  // The package version is pinned and the page is the same for every request; assets may be cached
  // briefly, and revalidated after an upgrade at the latest an hour later.
  const asset = (path: string, type: string) => () =>
    new Response(Bun.file(path), { headers: { "content-type": type, "cache-control": "public, max-age=3600", ...securityHeaders } });
  const hide = { detail: { hide: true } };

  return new Elysia({ name: "keyward/docs-ui" })
    .get(
      opts.uiPath,
      () => new Response(page, { headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-cache", ...securityHeaders } }),
      hide,
    )
    .get(`${assets}/swagger-ui-bundle.js`, asset(bundlePath, "text/javascript; charset=utf-8"), hide)
    .get(`${assets}/swagger-ui.css`, asset(cssPath, "text/css; charset=utf-8"), hide)
    .get(
      `${assets}/init.js`,
      () => new Response(INIT_JS, { headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=3600", ...securityHeaders } }),
      hide,
    );
}
