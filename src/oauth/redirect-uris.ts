// Redirect URIs and the lengths a client may have svc store: one check for registration (RFC 7591)
// and for client metadata documents alike, so that what reaches the consent page's form-action and
// the browser's Location header is always https, http to a loopback address, or a native app's
// private-use scheme, without a fragment.

/** Caps on what a client supplies and svc stores (refused above them, never cut). */
export const LIMITS = {
  redirectUris: 10,
  redirectUri: 512,
  /** All of a client's redirect URIs together. */
  redirectUrisTotal: 2048,
  clientName: 200,
  clientId: 512,
  state: 1024,
  scope: 256,
} as const;

function isLoopback(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return host === "127.0.0.1" || host === "::1" || host === "localhost";
}

/** A URL svc was given (a redirect URI, a client id), or null when it is longer than `maxLength`
 *  or no URL at all. */
export function parsedUrl(text: string, maxLength: number): URL | null {
  if (text.length > maxLength) return null;
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

/** One redirect URI a client may use: https, or http to a loopback address, or a private-use
 *  scheme with a dot (com.example.app:/callback, RFC 8252 §7.1); no fragment, no credentials. */
function validRedirectUri(uri: string): boolean {
  const url = parsedUrl(uri, LIMITS.redirectUri);
  if (url === null) return false;
  if (url.hash !== "" || uri.includes("#") || url.username !== "" || url.password !== "") return false;
  if (url.protocol === "https:") return true;
  if (url.protocol === "http:") return isLoopback(url);
  return /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/.test(url.protocol);
}

/** The reason a list of redirect URIs is refused, or null when every one may be used. */
export function redirectUrisProblem(uris: unknown): string | null {
  if (!Array.isArray(uris) || uris.length === 0 || !uris.every((u) => typeof u === "string")) {
    return "redirect_uris: one or more URIs";
  }
  if (uris.length > LIMITS.redirectUris) return `redirect_uris: at most ${LIMITS.redirectUris}`;
  if ((uris as string[]).reduce((n, u) => n + u.length, 0) > LIMITS.redirectUrisTotal) {
    return `redirect_uris: at most ${LIMITS.redirectUrisTotal} characters together`;
  }
  const bad = (uris as string[]).find((u) => !validRedirectUri(u));
  if (bad === undefined) return null;
  return bad.length > LIMITS.redirectUri
    ? `a redirect URI is longer than ${LIMITS.redirectUri} characters`
    : `not an allowed redirect URI: ${bad.slice(0, 200)}`;
}

/** Exact match; a loopback redirect (a desktop client) may use any port (RFC 8252 §7.3). */
export function redirectMatches(registered: string[], presented: string): boolean {
  if (registered.includes(presented)) return true;
  const url = parsedUrl(presented, LIMITS.redirectUri);
  if (url === null || url.protocol !== "http:" || !isLoopback(url)) return false;
  return registered.some((r) => {
    const reg = new URL(r);
    return (
      reg.protocol === "http:" &&
      isLoopback(reg) &&
      reg.hostname === url.hostname &&
      reg.pathname === url.pathname &&
      reg.search === url.search &&
      url.hash === ""
    );
  });
}
