// Browser-facing security of the admin pages: response headers, the session cookie, and the
// same-origin check that every form post passes besides its anti-forgery token.
import { type IpRange, ipAllowed, normalizeIp } from "../../auth/ip";

export const SESSION_COOKIE = "svc_admin_session";
const COOKIE_PATH = "/admin";

// The headers are those of every page svc serves (the API reference too).
export { CONTENT_SECURITY_POLICY, securityHeaders } from "../../http/security-headers";

export function sessionCookie(value: string, secure: boolean): string {
  return `${SESSION_COOKIE}=${value}; Path=${COOKIE_PATH}; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;
}

export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=${COOKIE_PATH}; Max-Age=0; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;
}

/** The value of one cookie from a Cookie header; null when absent. */
export function readCookie(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      return value.length > 0 ? value : null;
    }
  }
  return null;
}

/** True when the browser reached us over https: directly, or through a trusted reverse proxy
 *  that says so in X-Forwarded-Proto (the header of anyone else is ignored). */
export function cameOverHttps(request: Request, socketIp: string | null, trustedProxies: IpRange[]): boolean {
  if (new URL(request.url).protocol === "https:") return true;
  if (socketIp === null || trustedProxies.length === 0) return false;
  if (!ipAllowed(normalizeIp(socketIp), trustedProxies)) return false;
  const proto = request.headers.get("x-forwarded-proto");
  if (!proto) return false;
  const hops = proto.split(",").map((p) => p.trim().toLowerCase());
  return hops[hops.length - 1] === "https";
}

/** Origin of the page that sent a form post must be ours: Origin, or when a browser leaves it
 *  out, the origin of Referer. A post with neither is refused. */
export function sameOrigin(request: Request, https: boolean): boolean {
  const expected = `${https ? "https" : "http"}://${new URL(request.url).host}`;
  const origin = request.headers.get("origin");
  if (origin !== null) return origin === expected;
  const referer = request.headers.get("referer");
  if (referer === null) return false;
  try {
    return new URL(referer).origin === expected;
  } catch {
    return false;
  }
}
