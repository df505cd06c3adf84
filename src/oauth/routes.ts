// The authorization server's HTTP surface: the two metadata documents, registration,
// /oauth/authorize (to the operator's consent page), /oauth/token and /oauth/revoke. OAuth
// clients get OAuth answers ({error, error_description}, RFC 6749 §5.2), never the REST envelope:
// an OAuthError its routes throw carries its own answer, which the one error handler sends.
import { Elysia } from "elysia";
import { bodyPolicyOption, isInvalidBody } from "../http/body-policy";
import { clientLimitOption } from "../http/client-limit";
import { securityHeaders } from "../http/security-headers";
import { basicCredentials, NO_STORE, OAuthError } from "./protocol";
import type { OAuthService } from "./service";

const FORM_LIMIT = 16 * 1024;

/** The form of a token or revocation request: every field a string. */
function formOf(body: unknown): Record<string, string> {
  const notForm = new OAuthError("invalid_request", "the body must be a form");
  if (isInvalidBody(body) || typeof body !== "object" || body === null || Array.isArray(body)) throw notForm;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body)) {
    if (typeof v !== "string") throw notForm;
    out[k] = v;
  }
  return out;
}

/** Every route here needs no token: limited per client address, refused the OAuth way (§20). */
const PER_ADDRESS = {
  refuse: (seconds: number) =>
    new OAuthError("slow_down", `too many requests; retry in ${seconds} s`, 429).answer(),
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

export function oauthRoutes(oauth: OAuthService) {
  return new Elysia({ name: "oauth" })
    .use(bodyPolicyOption)
    .use(clientLimitOption)
    .get("/.well-known/oauth-protected-resource/mcp", () => oauth.metadata.protectedResource(), {
      clientLimit: PER_ADDRESS,
      detail: doc("Protected resource metadata of /mcp (RFC 9728)", "Where agents learn how to sign in."),
    })
    .get("/.well-known/oauth-authorization-server", () => oauth.metadata.authorizationServer(), {
      clientLimit: PER_ADDRESS,
      detail: doc(
        "Authorization server metadata (RFC 8414)",
        "Endpoints, PKCE S256, client metadata documents.",
      ),
    })
    .post(
      "/oauth/register",
      ({ body }) => {
        if (isInvalidBody(body)) throw new OAuthError("invalid_client_metadata", "the body is not JSON");
        return Response.json(oauth.clients.register(body), { status: 201, headers: NO_STORE });
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
        const outcome = await oauth.requests.authorize(query as Record<string, string | undefined>);
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
      ({ body, request }) =>
        Response.json(oauth.tokens.token(formOf(body), basicCredentials(request)), { headers: NO_STORE }),
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
        oauth.tokens.revoke(formOf(body), basicCredentials(request));
        return new Response(null, { status: 200, headers: NO_STORE });
      },
      {
        bodyPolicy: { kind: "form", limit: FORM_LIMIT, invalid: "route" },
        clientLimit: PER_ADDRESS,
        detail: doc("Token revocation (RFC 7009)", "Revokes the whole grant of a refresh or access token."),
      },
    );
}
