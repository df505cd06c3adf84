// The browser-facing headers of the pages svc serves (the admin pages and the API reference): a
// strict Content-Security-Policy, no framing, no sniffing, no caching.

/** No inline script or style anywhere, nothing from another origin: the pages load their own assets. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

export function securityHeaders(): Record<string, string> {
  return {
    "content-security-policy": CONTENT_SECURITY_POLICY,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    // Pages carry the anti-forgery token, and once a raw API token: never store them.
    "cache-control": "no-store",
  };
}
