// GET /docs: the API reference, rendered by Swagger UI from /docs/json. Its script and
// stylesheet come from the pinned swagger-ui-dist package, built into the binary: the page works
// without internet, loads nothing from another origin, and runs under the same strict
// Content-Security-Policy as the admin pages (no inline script: the start-up script is a file).
import { Elysia } from "elysia";
// Imported as files (paths, embedded by `bun build --compile`), read when asked for: held as
// strings they cost the server about 10 MB of memory from start-up on (the bundle has characters
// past U+00FF, so the engine keeps all 1.7 MB of it at two bytes a character).
import css from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import bundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import { securityHeaders } from "./security-headers";

const START = `window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({ url: "/docs/json", dom_id: "#api-reference", deepLinking: true, validatorUrl: null });
});
`;

const PAGE = `<!doctype html>
<html lang="ru">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="api-reference"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/start.js"></script>
</body>
</html>
`;

const ASSETS: Record<string, { body: () => string | Blob; type: string }> = {
  "swagger-ui.css": { body: () => Bun.file(css), type: "text/css; charset=utf-8" },
  "swagger-ui-bundle.js": { body: () => Bun.file(bundle), type: "text/javascript; charset=utf-8" },
  "start.js": { body: () => START, type: "text/javascript; charset=utf-8" },
};

/** The tab icon of svc's pages (a browser asks for it on every site). */
const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f3a5f"/><text x="16" y="23" font-family="sans-serif" font-size="20" font-weight="bold" fill="#fff" text-anchor="middle">s</text></svg>`;

export function apiReference() {
  return new Elysia({ name: "api-reference" })
    .get(
      "/favicon.ico",
      ({ set }) => {
        Object.assign(set.headers, {
          "content-type": "image/svg+xml",
          "cache-control": "public, max-age=86400",
        });
        return FAVICON;
      },
      { detail: { hide: true } },
    )
    .get(
      "/docs",
      ({ set }) => {
        Object.assign(set.headers, securityHeaders(), { "content-type": "text/html; charset=utf-8" });
        return PAGE;
      },
      { detail: { hide: true } },
    )
    .get(
      "/docs/assets/:name",
      ({ params, set }) => {
        const asset = Object.hasOwn(ASSETS, params.name) ? ASSETS[params.name] : undefined;
        if (!asset) return new Response(null, { status: 404 });
        // Immutable for this build; the page itself is never cached.
        Object.assign(set.headers, securityHeaders(), {
          "content-type": asset.type,
          "cache-control": "public, max-age=3600",
        });
        return asset.body();
      },
      { detail: { hide: true } },
    );
}
