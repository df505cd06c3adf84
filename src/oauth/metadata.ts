// The authorization server's two discovery documents: the protected resource's (RFC 9728, what
// /mcp answers to) and the server's own (RFC 8414).
import { OAUTH_SCOPE } from "./protocol";

export class OAuthMetadata {
  readonly issuer: string;
  /** The one protected resource: the agent endpoint that OAuth access tokens open. */
  readonly resource: string;

  constructor(publicUrl: string) {
    this.issuer = publicUrl;
    this.resource = `${publicUrl}/mcp`;
  }

  protectedResource() {
    return {
      resource: this.resource,
      authorization_servers: [this.issuer],
      scopes_supported: [OAUTH_SCOPE],
      bearer_methods_supported: ["header"],
      resource_name: "svc: read-only bank data for agents",
    };
  }

  authorizationServer() {
    return {
      issuer: this.issuer,
      authorization_endpoint: `${this.issuer}/oauth/authorize`,
      token_endpoint: `${this.issuer}/oauth/token`,
      registration_endpoint: `${this.issuer}/oauth/register`,
      revocation_endpoint: `${this.issuer}/oauth/revoke`,
      scopes_supported: [OAUTH_SCOPE],
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none", "client_secret_post", "client_secret_basic"],
      revocation_endpoint_auth_methods_supported: ["none", "client_secret_post", "client_secret_basic"],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    };
  }

  /** The client's redirect URI with the answer's parameters and the issuer (RFC 9207). */
  redirectWith(redirectUri: string, params: Record<string, string | null | undefined>): string {
    const url = new URL(redirectUri);
    for (const [k, v] of Object.entries({ ...params, iss: this.issuer })) {
      if (v !== undefined && v !== null) url.searchParams.set(k, v);
    }
    return url.toString();
  }
}
