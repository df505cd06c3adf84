// Tokens of grants: the token endpoint (a code exchanged with its PKCE verifier, rotating refresh
// tokens; a code or refresh token replayed ends its grant), revocation (RFC 7009), the end of a
// grant and the operator's list of grants. A grant is carried by an agent token
// (api_tokens.oauth_grant_id) whose hash is the grant's current access token's.
import { createHash, randomBytes } from "node:crypto";
import { generateToken, hashToken, tokenDisplayPrefix } from "../auth/tokens";
import { ApiError } from "../core/errors";
import type { OAuthClients } from "./clients";
import { type PageQuery, pageArgs, pageOf } from "./paging";
import {
  ACCESS_TTL_S,
  type BasicCredentials,
  b64url,
  NOT_EXCHANGED_PREFIX,
  type OAuthDeps,
  OAuthError,
  REFRESH_TTL_MS,
} from "./protocol";
import type { ClientRow, GrantRow } from "./repository";

export class OAuthTokens {
  constructor(
    private readonly deps: OAuthDeps,
    private readonly clients: OAuthClients,
  ) {}

  private nowMs(): number {
    return this.deps.clock.now().getTime();
  }

  token(form: Record<string, string>, basic: BasicCredentials): Record<string, unknown> {
    const client = this.clients.authenticate(form, basic);
    if (form.grant_type === "authorization_code") return this.exchangeCode(client, form);
    if (form.grant_type === "refresh_token") return this.refresh(client, form);
    throw new OAuthError("unsupported_grant_type", "grant_type: authorization_code or refresh_token");
  }

  private exchangeCode(client: ClientRow, form: Record<string, string>): Record<string, unknown> {
    if (!form.code || !form.code_verifier || !form.redirect_uri) {
      throw new OAuthError("invalid_request", "code, code_verifier and redirect_uri are required");
    }
    const request = this.deps.repo.requestByCode(hashToken(form.code));
    if (!request) throw new OAuthError("invalid_grant", "unknown code");
    if (request.status === "used") {
      // A code presented twice: whoever holds it may be an attacker; the grant goes (RFC 6749 §4.1.2).
      if (request.grantId) this.revokeGrant(request.grantId);
      throw new OAuthError("invalid_grant", "the code was already used");
    }
    if (request.status !== "approved" || request.expiresAtMs <= this.nowMs()) {
      throw new OAuthError("invalid_grant", "the code expired");
    }
    if (request.clientId !== client.id)
      throw new OAuthError("invalid_grant", "the code was issued to another client");
    if (request.redirectUri !== form.redirect_uri)
      throw new OAuthError("invalid_grant", "redirect_uri differs from the authorization request");
    if (form.resource !== undefined && form.resource !== request.resource) {
      throw new OAuthError("invalid_target", `resource must be ${request.resource}`);
    }
    const challenge = b64url(createHash("sha256").update(form.code_verifier).digest());
    if (challenge !== request.codeChallenge) {
      // A code with the wrong verifier is spent, and its grant goes: whoever holds the code without
      // the verifier is not the client that asked, and nobody gets a second guess.
      this.deps.repo.atomically(() => {
        if (this.deps.repo.settleRequest(request.id, "approved", "used") && request.grantId) {
          this.revokeGrant(request.grantId);
        }
      });
      throw new OAuthError("invalid_grant", "code_verifier does not match the challenge; the code is spent");
    }
    const grant = request.grantId ? this.deps.repo.grant(request.grantId) : null;
    if (!grant || grant.revokedAt !== null) throw new OAuthError("invalid_grant", "the grant was revoked");
    return this.deps.repo.atomically(() => {
      if (!this.deps.repo.settleRequest(request.id, "approved", "used")) {
        throw new OAuthError("invalid_grant", "the code was already used");
      }
      return this.issue(grant);
    });
  }

  private refresh(client: ClientRow, form: Record<string, string>): Record<string, unknown> {
    if (!form.refresh_token) throw new OAuthError("invalid_request", "refresh_token is required");
    const hash = hashToken(form.refresh_token);
    const row = this.deps.repo.refresh(hash);
    if (!row) throw new OAuthError("invalid_grant", "unknown refresh token");
    if (row.createdAtMs + REFRESH_TTL_MS <= this.nowMs())
      throw new OAuthError("invalid_grant", "the refresh token expired; sign in again");
    const grant = this.deps.repo.grant(row.grantId);
    if (!grant || grant.revokedAt !== null) throw new OAuthError("invalid_grant", "the grant was revoked");
    if (grant.clientId !== client.id)
      throw new OAuthError("invalid_grant", "the refresh token was issued to another client");
    if (form.resource !== undefined && form.resource !== grant.resource) {
      throw new OAuthError("invalid_target", `resource must be ${grant.resource}`);
    }
    const issued = this.deps.repo.atomically(() => {
      // A used refresh token again: it was stolen, or its answer was; the whole grant goes.
      if (!this.deps.repo.useRefresh(hash, this.nowMs())) return null;
      return this.issue(grant);
    });
    if (issued === null) {
      this.revokeGrant(grant.id);
      throw new OAuthError("invalid_grant", "the refresh token was already used; the grant is revoked");
    }
    return issued;
  }

  /** A new access token (the grant's agent token now answers to it) and a new refresh token. */
  private issue(grant: GrantRow): Record<string, unknown> {
    const access = generateToken("live");
    const refresh = b64url(randomBytes(32));
    const expires = new Date(this.nowMs() + ACCESS_TTL_S * 1000);
    this.deps.tokens.update(grant.apiTokenId, {
      tokenHash: hashToken(access),
      tokenPrefix: tokenDisplayPrefix(access),
      expiresAt: expires.toISOString(),
    });
    this.deps.repo.insertRefresh(hashToken(refresh), grant.id, this.nowMs());
    return {
      access_token: access,
      token_type: "Bearer",
      expires_in: ACCESS_TTL_S,
      refresh_token: refresh,
      scope: grant.scope,
    };
  }

  /** RFC 7009: the grant of a refresh or access token goes; unknown tokens are no error. */
  revoke(form: Record<string, string>, basic: BasicCredentials): void {
    const client = this.clients.authenticate(form, basic);
    if (!form.token) throw new OAuthError("invalid_request", "token is required");
    const hash = hashToken(form.token);
    const refresh = this.deps.repo.refresh(hash);
    const tokenRecord = refresh ? null : this.deps.tokens.findByHash(hash);
    const grantId = refresh?.grantId ?? tokenRecord?.oauthGrantId ?? null;
    if (!grantId) return;
    const grant = this.deps.repo.grant(grantId);
    if (grant && grant.clientId === client.id) this.revokeGrant(grant.id);
  }

  /** The grant and its agent token end; effective from the next request. */
  revokeGrant(grantId: string): GrantRow {
    const grant = this.deps.repo.grant(grantId);
    if (!grant) throw new ApiError("not_found", "Доступ не найден");
    const at = this.deps.clock.now().toISOString();
    this.deps.repo.atomically(() => {
      this.deps.repo.revokeGrant(grant.id, at);
      this.deps.tokens.update(grant.apiTokenId, { revokedAt: at });
    });
    return this.deps.repo.grant(grantId)!;
  }

  /** The operator's list, newest first. */
  grants(q: PageQuery = {}) {
    const { limit, after } = pageArgs(q);
    const rows = this.deps.repo.grants(limit + 1, NOT_EXCHANGED_PREFIX, after);
    return pageOf(
      rows,
      limit,
      (g) => ({ key: g.createdAt, id: g.id }),
      "grants",
      (g) => {
        const client = this.deps.repo.client(g.clientId);
        return {
          grant_id: g.id,
          client_id: g.clientId,
          client_name: client?.name ?? g.clientId,
          company_id: g.companyId,
          api_token_id: g.apiTokenId,
          accounts: this.deps.tokens.grants(g.apiTokenId).map((a) => a.bankAccountId),
          scope: g.scope,
          created_at: g.createdAt,
          revoked_at: g.revokedAt,
        };
      },
    );
  }
}
