// The Origin check of the agent HTTP transport (against DNS rebinding from a browser page).
// Requests without Origin (non-browser clients) pass.

const LOCAL_HOSTNAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);

function parseOrigin(value: string): URL | null {
  try {
    const url = new URL(value);
    if (url.protocol !== "http:" && url.protocol !== "https:") return null;
    return url;
  } catch {
    return null;
  }
}

/**
 * `allowed` is MCP_ALLOWED_ORIGINS; empty means localhost only (http or https, any port, as
 * localhost, 127.0.0.1 or [::1]).
 */
export function createOriginPolicy(allowed: string[]): (origin: string | null) => boolean {
  const origins = new Set(
    allowed.map((a) => parseOrigin(a)?.origin).filter((o): o is string => typeof o === "string"),
  );
  return (origin) => {
    if (origin === null) return true;
    const url = parseOrigin(origin);
    if (!url) return false;
    if (origins.size === 0) return LOCAL_HOSTNAMES.has(url.hostname);
    return origins.has(url.origin);
  };
}
