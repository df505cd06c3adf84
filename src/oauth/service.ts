// svc as an OAuth 2.1 authorization server for /mcp, by area: metadata (the discovery documents),
// clients (registered, or known by their metadata document), requests (the authorization code flow
// with PKCE S256 only and the operator's consent), tokens (access tokens bound to the /mcp
// resource, rotating refresh tokens, revocation). A grant is carried by an agent token
// (api_tokens.oauth_grant_id): per-account rules, rate limits, audit and the read-only connection
// are an agent token's. The sweep of the OAuth tables is here, as it reaches every area.
import { AuthorizationRequests } from "./authorize";
import { OAuthClients } from "./clients";
import { OAuthMetadata } from "./metadata";
import { DAY_MS, type OAuthDeps, REFRESH_TTL_MS, SPENT_KEEP_MS, UNUSED_CLIENT_MS } from "./protocol";
import { OAuthTokens } from "./tokens";

export class OAuthService {
  readonly metadata: OAuthMetadata;
  readonly clients: OAuthClients;
  readonly requests: AuthorizationRequests;
  readonly tokens: OAuthTokens;

  constructor(private readonly deps: OAuthDeps) {
    this.metadata = new OAuthMetadata(deps.publicUrl);
    this.clients = new OAuthClients(deps);
    this.requests = new AuthorizationRequests(deps, this.clients, this.metadata);
    this.tokens = new OAuthTokens(deps, this.clients);
  }

  /**
   * One batch of each sweep (OAuthSweeper runs it once per interval for the fleet): expired
   * authorization requests (a used code's a day later), refresh tokens past their lifetime or spent
   * a day ago or of revoked grants, grants nothing can renew any more (ended like a revocation),
   * and clients that never got a grant within a day. Returns what it removed; a count equal to the
   * batch means there may be more.
   */
  sweepOnce(): { requests: number; refreshTokens: number; grants: number; clients: number } {
    const { repo, clock } = this.deps;
    const now = clock.now().getTime();
    const requests = repo.deleteExpiredRequests(now, SPENT_KEEP_MS);
    const stale = repo.staleGrants(new Date(now - DAY_MS).toISOString(), now - REFRESH_TTL_MS);
    for (const id of stale) this.tokens.revokeGrant(id);
    const refreshTokens = repo.deleteDeadRefreshTokens(now, REFRESH_TTL_MS, SPENT_KEEP_MS);
    const clients = repo.deleteUnusedClients(new Date(now - UNUSED_CLIENT_MS).toISOString());
    return { requests, refreshTokens, grants: stale.length, clients };
  }
}
