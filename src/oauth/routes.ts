// The authorization server's HTTP surface: the two metadata documents, registration,
// /oauth/authorize (to the operator's consent page), /oauth/token and /oauth/revoke. OAuth
// clients get OAuth answers ({error, error_description}, RFC 6749 §5.2), never the REST envelope.
import { Elysia } from "elysia";
import { bodyPolicyOption, isInvalidBody } from "../http/body-policy";
import { clientLimitOption } from "../http/client-limit";
import { securityHeaders } from "../http/security-headers";
import { OAuthError } from "./protocol";
import type { OAuthService } from "./service";

const FORM_LIMIT = 16 * 1024;
const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" };

function oauthError(e: OAuthError, basicUsed = false): Response {
  const headers: Record<string, string> = { ...NO_STORE };
  if (e.status === 401 && basicUsed) headers["www-authenticate"] = 'Basic realm="svc"';
  return Response.json({ error: e.error, error_description: e.description }, { status: e.status, headers });
}

/** HTTP Basic client credentials (RFC 6749 §2.3.1: both parts form-urlencoded). */
function basicCredentials(request: Request): { id: string; secret: string } | null {
  const header = request.headers.get("authorization");
  if (!header?.startsWith("Basic ")) return null;
  const decoded = Buffer.from(header.slice(6), "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return null;
  try {
    return {
      id: decodeURIComponent(decoded.slice(0, colon)),
      secret: decodeURIComponent(decoded.slice(colon + 1)),
    };
  } catch {
    return null;
  }
}

function formOf(body: unknown): Record<string, string> | null {
  if (isInvalidBody(body) || typeof body !== "object" || body === null || Array.isArray(body)) return null;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body)) {
    if (typeof v !== "string") return null;
    out[k] = v;
  }
  return out;
}

/** Every route here needs no token: limited per client address, refused the OAuth way (§20). */
const PER_ADDRESS = {
  refuse: (seconds: number) =>
    oauthError(new OAuthError("slow_down", `too many requests; retry in ${seconds} s`, 429)),
};

const doc = (summary: string, description: string) =>
  ({ summary, tags: ["oauth"], description, security: [] }) as never;

function errorPage(message: string): Response {
  const html = `<!doctype html><html lang="ru"><head><meta charset="utf-8"><title>svc: запрос на доступ отклонён</title></head><body><h1>Запрос на доступ отклонён</h1><p>${Bun.escapeHTML(message)}</p></body></html>`;
  return new Response(html, {
    status: 400,
    headers: { ...securityHeaders(), "content-type": "text/html; charset=utf-8" },
  });
}

export function oauthRoutes(service: OAuthService) {
  return new Elysia({ name: "oauth" })
    .use(bodyPolicyOption)
    .use(clientLimitOption)
    .get("/.well-known/oauth-protected-resource/mcp", () => service.metadata.protectedResource(), {
      clientLimit: PER_ADDRESS,
      detail: doc("Protected resource metadata of /mcp (RFC 9728)", "Where agents learn how to sign in."),
    })
    .get("/.well-known/oauth-authorization-server", () => service.metadata.authorizationServer(), {
      clientLimit: PER_ADDRESS,
      detail: doc(
        "Authorization server metadata (RFC 8414)",
        "Endpoints, PKCE S256, client metadata documents.",
      ),
    })
    .post(
      "/oauth/register",
      ({ body }) => {
        try {
          if (isInvalidBody(body)) throw new OAuthError("invalid_client_metadata", "the body is not JSON");
          return Response.json(service.clients.register(body), { status: 201, headers: NO_STORE });
        } catch (e) {
          if (e instanceof OAuthError) return oauthError(e);
          throw e;
        }
      },
      {
        bodyPolicy: { kind: "json", limit: FORM_LIMIT, invalid: "route" },
        clientLimit: PER_ADDRESS,
        detail: doc(
          "Dynamic client registration (RFC 7591)",
          "Public clients (PKCE) or clients with a secret.",
        ),
      },
    )
    .get(
      "/oauth/authorize",
      async ({ query }) => {
        const outcome = await service.requests.authorize(query as Record<string, string | undefined>);
        if (outcome.kind === "page") return errorPage(outcome.message);
        return new Response(null, {
          status: 302,
          headers: { location: outcome.location, "cache-control": "no-store" },
        });
      },
      {
        clientLimit: PER_ADDRESS,
        detail: doc(
          "Authorization request (code flow, PKCE S256)",
          "A valid request goes to the operator's consent page (/admin/oauth/consent/{request_id}); the answer comes back to the client's redirect_uri with code, state and iss.",
        ),
      },
    )
    .post(
      "/oauth/token",
      ({ body, request }) => {
        const basic = basicCredentials(request);
        try {
          const form = formOf(body);
          if (form === null) throw new OAuthError("invalid_request", "the body must be a form");
          return Response.json(service.tokens.token(form, basic), { headers: NO_STORE });
        } catch (e) {
          if (e instanceof OAuthError) return oauthError(e, basic !== null);
          throw e;
        }
      },
      {
        bodyPolicy: { kind: "form", limit: FORM_LIMIT, invalid: "route" },
        clientLimit: PER_ADDRESS,
        detail: doc(
          "Token endpoint",
          "authorization_code (with code_verifier) and refresh_token (rotating).",
        ),
      },
    )
    .post(
      "/oauth/revoke",
      ({ body, request }) => {
        const basic = basicCredentials(request);
        try {
          const form = formOf(body);
          if (form === null) throw new OAuthError("invalid_request", "the body must be a form");
          service.tokens.revoke(form, basic);
          return new Response(null, { status: 200, headers: NO_STORE });
        } catch (e) {
          if (e instanceof OAuthError) return oauthError(e, basic !== null);
          throw e;
        }
      },
      {
        bodyPolicy: { kind: "form", limit: FORM_LIMIT, invalid: "route" },
        clientLimit: PER_ADDRESS,
        detail: doc("Token revocation (RFC 7009)", "Revokes the whole grant of a refresh or access token."),
      },
    );
}
