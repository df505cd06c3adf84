// svc as an OAuth 2.1 authorization server for /mcp: clients (registered, or known by their
// metadata document), the authorization code flow with PKCE S256 only and the operator's consent,
// access tokens bound to the /mcp resource, rotating refresh tokens, revocation. A grant is carried
// by an agent token (api_tokens.oauth_grant_id) whose hash is the grant's current access token's:
// per-account rules, rate limits, audit and the read-only connection are an agent token's.
import { createHash, randomBytes } from "node:crypto";
import type { AuditLog } from "../audit/audit-log";
import { generateToken, hashToken, secretEquals, tokenDisplayPrefix } from "../auth/tokens";
import type { Clock } from "../core/clock";
import { ApiError, validationError } from "../core/errors";
import type { BankAccountRepository, CompanyRepository } from "../db/repos/accounts";
import type { TokenRepository } from "../db/repos/tokens";
import { MetadataDocumentError, MetadataDocuments } from "./cimd";
import { LIMITS, redirectMatches, redirectUrisProblem } from "./redirect-uris";
import type { ClientRow, GrantRow, OAuthRepository, PagePosition, RequestRow } from "./repository";

/** The one scope: reading statements, balances and operations through the agent tools. */
export const OAUTH_SCOPE = "statements:read";
const ACCESS_TTL_S = 3600;
const REQUEST_TTL_MS = 10 * 60_000;
const CODE_TTL_MS = 60_000;
const DAY_MS = 86_400_000;
/** A refresh token works for 30 days; each refresh issues a new one, so a grant in use lives on
 *  and one unused for 30 days ends. */
const REFRESH_TTL_MS = 30 * DAY_MS;
/** Spent codes and refresh tokens are kept this long after use, so that a replay still revokes. */
const SPENT_KEEP_MS = DAY_MS;
/** A client that got no grant within a day of its registration (or last document fetch) is deleted. */
const UNUSED_CLIENT_MS = DAY_MS;
/** Registrations within the sweep's day at most: past it, new ones wait (a flood from many
 *  addresses cannot fill the disk; clients already registered keep working). */
const MAX_CLIENTS_PER_DAY = 10_000;

/** An OAuth error answer (RFC 6749 §5.2): `error` and a description, with its HTTP status. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
    this.name = "OAuthError";
  }
}

export interface OAuthDeps {
  repo: OAuthRepository;
  tokens: TokenRepository;
  companies: CompanyRepository;
  accounts: BankAccountRepository;
  audit: AuditLog;
  clock: Clock;
  publicUrl: string;
  /** Fetch client metadata documents from internal addresses (and over http): tests, labs. */
  allowInternalClients: boolean;
  fetch?: typeof fetch;
}

const b64url = (bytes: Buffer) => bytes.toString("base64url");
const randomId = () => randomBytes(16).toString("hex");

export type AuthorizeOutcome =
  | { kind: "page"; status: number; message: string }
  | { kind: "redirect"; location: string };

export class OAuthService {
  private readonly documents: MetadataDocuments;
  readonly issuer: string;
  readonly resource: string;

  constructor(private readonly deps: OAuthDeps) {
    this.issuer = deps.publicUrl;
    this.resource = `${deps.publicUrl}/mcp`;
    this.documents = new MetadataDocuments({
      allowInternal: deps.allowInternalClients,
      now: () => deps.clock.now().getTime(),
      fetch: deps.fetch,
    });
  }

  private nowMs(): number {
    return this.deps.clock.now().getTime();
  }

  // ---- metadata

  protectedResourceMetadata() {
    return {
      resource: this.resource,
      authorization_servers: [this.issuer],
      scopes_supported: [OAUTH_SCOPE],
      bearer_methods_supported: ["header"],
      resource_name: "svc: read-only bank data for agents",
    };
  }

  authorizationServerMetadata() {
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

  // ---- clients

  /** Dynamic Client Registration (RFC 7591). */
  register(body: unknown): Record<string, unknown> {
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw new OAuthError("invalid_client_metadata", "the registration must be a JSON object");
    }
    const b = body as Record<string, unknown>;
    const uris = b.redirect_uris;
    const problem = redirectUrisProblem(uris);
    if (problem !== null) throw new OAuthError("invalid_redirect_uri", problem);
    const method = b.token_endpoint_auth_method ?? "none";
    if (method !== "none" && method !== "client_secret_post" && method !== "client_secret_basic") {
      throw new OAuthError(
        "invalid_client_metadata",
        "token_endpoint_auth_method: none, client_secret_post or client_secret_basic",
      );
    }
    const grantTypes = (b.grant_types as unknown[] | undefined) ?? ["authorization_code", "refresh_token"];
    if (
      !Array.isArray(grantTypes) ||
      grantTypes.some((g) => g !== "authorization_code" && g !== "refresh_token")
    ) {
      throw new OAuthError("invalid_client_metadata", "grant_types: authorization_code, refresh_token");
    }
    if (b.client_name !== undefined && typeof b.client_name !== "string") {
      throw new OAuthError("invalid_client_metadata", "client_name: a string");
    }
    if (typeof b.client_name === "string" && b.client_name.trim().length > LIMITS.clientName) {
      throw new OAuthError("invalid_client_metadata", `client_name: at most ${LIMITS.clientName} characters`);
    }
    const name =
      typeof b.client_name === "string" && b.client_name.trim() !== ""
        ? b.client_name.trim()
        : "unnamed client";
    const since = new Date(this.nowMs() - UNUSED_CLIENT_MS).toISOString();
    if (this.deps.repo.clientsSince(since, MAX_CLIENTS_PER_DAY) >= MAX_CLIENTS_PER_DAY) {
      throw new OAuthError(
        "temporarily_unavailable",
        "too many clients were registered in the last day; try again later",
        503,
      );
    }
    const secret = method === "none" ? null : b64url(randomBytes(32));
    const row: ClientRow = {
      id: `svc-client-${randomId()}`,
      kind: "registered",
      name,
      redirectUris: uris as string[],
      tokenEndpointAuthMethod: method,
      secretHash: secret === null ? null : hashToken(secret),
      createdAt: this.deps.clock.now().toISOString(),
    };
    this.deps.repo.upsertClient(row);
    return {
      client_id: row.id,
      client_id_issued_at: Math.floor(this.nowMs() / 1000),
      ...(secret === null ? {} : { client_secret: secret, client_secret_expires_at: 0 }),
      client_name: name,
      redirect_uris: row.redirectUris,
      token_endpoint_auth_method: method,
      grant_types: grantTypes,
      response_types: ["code"],
      scope: OAUTH_SCOPE,
    };
  }

  /** A registered client, or one known by its metadata document (fetched and remembered). */
  private async resolveClient(clientId: string): Promise<ClientRow | null> {
    const known = this.deps.repo.client(clientId);
    if (known?.kind === "registered") return known;
    if (!MetadataDocuments.isDocumentUrl(clientId, this.deps.allowInternalClients)) return null;
    const doc = await this.documents.get(clientId);
    const row: ClientRow = {
      id: clientId,
      kind: "metadata_document",
      name: doc.client_name ?? new URL(clientId).hostname,
      redirectUris: doc.redirect_uris,
      tokenEndpointAuthMethod: "none",
      secretHash: null,
      createdAt: known?.createdAt ?? this.deps.clock.now().toISOString(),
    };
    this.deps.repo.upsertClient(row);
    return row;
  }

  // ---- authorization

  /**
   * GET /oauth/authorize. Every error before the operator's consent is answered with a page, never
   * a redirect: anyone may register a client with any https redirect URI, so a redirect carrying an
   * error would make svc an open redirector (RFC 9700 §4.11.2; RFC 6749 §4.1.2.1 only permits it).
   * A good request waits for the operator's consent; only the consent's answer goes back.
   */
  async authorize(q: Record<string, string | undefined>): Promise<AuthorizeOutcome> {
    const page = (message: string): AuthorizeOutcome => ({ kind: "page", status: 400, message });
    if (!q.client_id) return page("client_id is missing");
    if (q.client_id.length > LIMITS.clientId) return page("Unknown client_id");
    let client: ClientRow | null;
    try {
      client = await this.resolveClient(q.client_id);
    } catch (e) {
      if (e instanceof MetadataDocumentError) return page(`The client cannot be verified: ${e.message}`);
      throw e;
    }
    if (!client) return page("Unknown client_id");
    if (!q.redirect_uri) return page("redirect_uri is missing");
    if (!redirectMatches(client.redirectUris, q.redirect_uri))
      return page("redirect_uri is not registered for this client");
    if (q.response_type !== "code") return page("unsupported_response_type: response_type must be code");
    if (!q.code_challenge || q.code_challenge_method !== "S256") {
      return page("invalid_request: PKCE with code_challenge_method S256 is required");
    }
    if (!/^[A-Za-z0-9_-]{43}$/.test(q.code_challenge))
      return page("invalid_request: code_challenge is not an S256 challenge");
    if (q.resource !== undefined && q.resource !== this.resource) {
      return page(`invalid_target: resource must be ${this.resource}`);
    }
    if ((q.scope?.length ?? 0) > LIMITS.scope)
      return page(`invalid_scope: scope is longer than ${LIMITS.scope} characters`);
    const scopes = [...new Set((q.scope ?? OAUTH_SCOPE).split(" ").filter((s) => s !== ""))];
    if (scopes.some((s) => s !== OAUTH_SCOPE)) return page(`invalid_scope: the only scope is ${OAUTH_SCOPE}`);
    if ((q.state?.length ?? 0) > LIMITS.state)
      return page(`invalid_request: state is longer than ${LIMITS.state} characters`);
    const row: RequestRow = {
      id: randomId(),
      clientId: client.id,
      redirectUri: q.redirect_uri,
      state: q.state ?? null,
      codeChallenge: q.code_challenge,
      scope: scopes.join(" "),
      resource: this.resource,
      status: "pending",
      codeHash: null,
      grantId: null,
      createdAtMs: this.nowMs(),
      expiresAtMs: this.nowMs() + REQUEST_TTL_MS,
    };
    this.deps.repo.insertRequest(row);
    return { kind: "redirect", location: `/admin/oauth/consent/${row.id}` };
  }

  private redirectWith(redirectUri: string, params: Record<string, string | null | undefined>): string {
    const url = new URL(redirectUri);
    for (const [k, v] of Object.entries({ ...params, iss: this.issuer })) {
      if (v !== undefined && v !== null) url.searchParams.set(k, v);
    }
    return url.toString();
  }

  /** A request waiting for the operator, with what the consent page shows. */
  pendingRequest(id: string) {
    const request = this.deps.repo.request(id);
    if (request?.status !== "pending" || request.expiresAtMs <= this.nowMs()) {
      throw new ApiError("not_found", "Запрос на доступ не найден или устарел");
    }
    return this.requestView(request);
  }

  private requestView(r: RequestRow) {
    const client = this.deps.repo.client(r.clientId);
    return {
      request_id: r.id,
      client_id: r.clientId,
      client_name: client?.name ?? r.clientId,
      /** registered: the client registered itself; metadata_document: svc read its name at its URL. */
      client_kind: client?.kind ?? "registered",
      redirect_host: new URL(r.redirectUri).host,
      scope: r.scope,
      created_at: new Date(r.createdAtMs).toISOString(),
      expires_at: new Date(r.expiresAtMs).toISOString(),
    };
  }

  /** The origin the consent page may send the browser back to (its form's redirect). */
  redirectOriginOf(requestId: string): string | null {
    const request = this.deps.repo.request(requestId);
    if (!request) return null;
    const url = new URL(request.redirectUri);
    return url.protocol === "http:" || url.protocol === "https:" ? url.origin : `${url.protocol}`;
  }

  pendingRequests(q: PageQuery = {}) {
    const { limit, after } = pageArgs(q);
    const rows = this.deps.repo.pendingRequests(this.nowMs(), limit + 1, after);
    return pageOf(
      rows,
      limit,
      (r) => ({ key: r.createdAtMs, id: r.id }),
      "requests",
      (r) => this.requestView(r),
    );
  }

  /**
   * The operator approves: a grant of the chosen company's chosen accounts (`scope` may narrow what
   * the client asked for), and a single-use code back to the client.
   */
  approve(
    requestId: string,
    input: { company_id: string; accounts: { bank_account_id: string }[]; scope?: string },
    actor: { requestId?: string | null; ip?: string | null } = {},
  ): { redirect_to: string } {
    const request = this.deps.repo.request(requestId);
    if (request?.status !== "pending" || request.expiresAtMs <= this.nowMs()) {
      throw new ApiError("not_found", "Запрос на доступ не найден или устарел");
    }
    const company = this.deps.companies.findById(input.company_id);
    if (!company) throw new ApiError("not_found", "Компания не найдена", { field: "company_id" });
    if (input.accounts.length === 0) throw validationError("accounts", "Выберите хотя бы один счёт");
    for (const [i, a] of input.accounts.entries()) {
      const account = this.deps.accounts.findById(a.bank_account_id);
      if (!account || account.companyId !== company.id) {
        throw validationError(`accounts[${i}]`, "Счёт не найден у этой компании");
      }
    }
    const scope = input.scope ?? request.scope;
    if (scope.split(" ").some((s) => s !== "" && !request.scope.split(" ").includes(s))) {
      throw validationError("scope", "Можно только сузить запрошенный доступ");
    }
    const client = this.deps.repo.client(request.clientId);
    const code = b64url(randomBytes(32));
    const grantId = randomId();
    const tokenId = crypto.randomUUID();
    const now = this.deps.clock.now();
    const placeholder = generateToken("live");
    this.deps.repo.atomically(() => {
      if (
        !this.deps.repo.settleRequest(request.id, "pending", "approved", {
          codeHash: hashToken(code),
          grantId,
          expiresAtMs: this.nowMs() + CODE_TTL_MS,
        })
      ) {
        throw new ApiError("conflict", "Запрос уже обработан");
      }
      // The grant's agent token: no access token works until the code is exchanged.
      this.deps.tokens.insert(
        {
          id: tokenId,
          companyId: company.id,
          name: `OAuth: ${client?.name ?? request.clientId}`.slice(0, 128),
          purpose: "mcp",
          mode: "live",
          tokenHash: hashToken(placeholder),
          tokenPrefix: "oauth",
          scopeReadStatements: scope.split(" ").includes(OAUTH_SCOPE),
          scopeSendPayments: false,
          allowedIps: [],
          rateLimitPerMinute: null,
          expiresAt: now.toISOString(),
          revokedAt: null,
          createdAt: now.toISOString(),
          lastUsedAt: null,
          oauthGrantId: grantId,
        },
        input.accounts.map((a) => ({
          bankAccountId: a.bank_account_id,
          allowReadStatements: true,
          allowSendPayments: false,
        })),
      );
      this.deps.repo.insertGrant({
        id: grantId,
        clientId: request.clientId,
        apiTokenId: tokenId,
        companyId: company.id,
        scope,
        resource: request.resource,
        createdAt: now.toISOString(),
        revokedAt: null,
      });
      this.deps.audit.write({
        at: now,
        actor: "admin",
        action: "admin.oauth.approve",
        target: grantId,
        arguments: {
          client_id: request.clientId,
          company_id: company.id,
          accounts: input.accounts.length,
          scope,
        },
        outcome: "ok",
        requestId: actor.requestId ?? null,
        ip: actor.ip ?? null,
      });
    });
    return { redirect_to: this.redirectWith(request.redirectUri, { code, state: request.state }) };
  }

  deny(
    requestId: string,
    actor: { requestId?: string | null; ip?: string | null } = {},
  ): { redirect_to: string } {
    const request = this.deps.repo.request(requestId);
    if (!request || !this.deps.repo.settleRequest(requestId, "pending", "denied")) {
      throw new ApiError("not_found", "Запрос на доступ не найден или уже обработан");
    }
    this.deps.audit.write({
      at: this.deps.clock.now(),
      actor: "admin",
      action: "admin.oauth.deny",
      target: requestId,
      arguments: { client_id: request.clientId },
      outcome: "ok",
      requestId: actor.requestId ?? null,
      ip: actor.ip ?? null,
    });
    return {
      redirect_to: this.redirectWith(request.redirectUri, {
        error: "access_denied",
        error_description: "the operator denied access",
        state: request.state,
      }),
    };
  }

  // ---- tokens

  /** The client of a token request: its id (form or Basic), its secret when it has one. */
  private authenticateClient(
    form: Record<string, string>,
    basic: { id: string; secret: string } | null,
  ): ClientRow {
    const clientId = basic?.id ?? form.client_id;
    if (!clientId) throw new OAuthError("invalid_client", "client_id is missing", 401);
    const client = this.deps.repo.client(clientId);
    if (!client) throw new OAuthError("invalid_client", "unknown client", 401);
    if (client.secretHash !== null) {
      const secret = basic?.secret ?? form.client_secret;
      if (!secret || !secretEquals(hashToken(secret), client.secretHash)) {
        throw new OAuthError("invalid_client", "client authentication failed", 401);
      }
    }
    return client;
  }

  token(form: Record<string, string>, basic: { id: string; secret: string } | null): Record<string, unknown> {
    const client = this.authenticateClient(form, basic);
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
  revoke(form: Record<string, string>, basic: { id: string; secret: string } | null): void {
    const client = this.authenticateClient(form, basic);
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

  // ---- the operator's lists (newest first, in pages)

  clients(q: PageQuery = {}) {
    const { limit, after } = pageArgs(q);
    const rows = this.deps.repo.clients(limit + 1, after);
    return pageOf(
      rows,
      limit,
      (c) => ({ key: c.createdAt, id: c.id }),
      "clients",
      (c) => ({
        client_id: c.id,
        kind: c.kind,
        name: c.name,
        redirect_uris: c.redirectUris,
        created_at: c.createdAt,
      }),
    );
  }

  grants(q: PageQuery = {}) {
    const { limit, after } = pageArgs(q);
    const rows = this.deps.repo.grants(limit + 1, after);
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

  // ---- the sweep (OAuthSweeper runs it once per interval for the fleet)

  /**
   * One batch of each sweep: expired authorization requests (a used code's a day later), refresh
   * tokens past their lifetime or spent a day ago or of revoked grants, grants nothing can renew
   * any more (ended like a revocation), and clients that never got a grant within a day. Returns
   * what it removed; a count equal to the batch means there may be more.
   */
  sweepOnce(): { requests: number; refreshTokens: number; grants: number; clients: number } {
    const now = this.nowMs();
    const requests = this.deps.repo.deleteExpiredRequests(now, SPENT_KEEP_MS);
    const stale = this.deps.repo.staleGrants(new Date(now - DAY_MS).toISOString(), now - REFRESH_TTL_MS);
    for (const id of stale) this.revokeGrant(id);
    const refreshTokens = this.deps.repo.deleteDeadRefreshTokens(now, REFRESH_TTL_MS, SPENT_KEEP_MS);
    const clients = this.deps.repo.deleteUnusedClients(new Date(now - UNUSED_CLIENT_MS).toISOString());
    return { requests, refreshTokens, grants: stale.length, clients };
  }
}

/** `limit` (1 to 500, 100 by default) and an opaque `cursor` from the previous page. */
export interface PageQuery {
  limit?: number;
  cursor?: string;
}

function pageArgs(q: PageQuery): { limit: number; after?: PagePosition } {
  const limit = q.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > 500)
    throw validationError("limit", "limit: от 1 до 500");
  if (q.cursor === undefined) return { limit };
  const after = decodeCursor(q.cursor);
  if (after === null) throw validationError("cursor", "Неверный курсор");
  return { limit, after };
}

function pageOf<R, V, K extends string>(
  rows: R[],
  limit: number,
  position: (row: R) => PagePosition,
  name: K,
  view: (row: R) => V,
): Record<K, V[]> & { next_cursor: string | null } {
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  return {
    [name]: page.map(view),
    next_cursor: more && last ? Buffer.from(JSON.stringify(position(last))).toString("base64url") : null,
  } as Record<K, V[]> & { next_cursor: string | null };
}

function decodeCursor(cursor: string): PagePosition | null {
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString()) as Partial<PagePosition>;
    const keyOk = typeof v.key === "string" || (typeof v.key === "number" && Number.isSafeInteger(v.key));
    return keyOk && typeof v.id === "string" ? { key: v.key!, id: v.id } : null;
  } catch {
    return null;
  }
}
