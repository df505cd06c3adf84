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
import type { ClientRow, GrantRow, OAuthRepository, RequestRow } from "./repository";

/** The one scope: reading statements, balances and operations through the agent tools. */
export const OAUTH_SCOPE = "statements:read";
const ACCESS_TTL_S = 3600;
const REQUEST_TTL_MS = 10 * 60_000;
const CODE_TTL_MS = 60_000;

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

function isLoopback(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return host === "127.0.0.1" || host === "::1" || host === "localhost";
}

/** A redirect URI a client may register: https, or http to a loopback address; no fragment. */
function validRedirectUri(uri: string): boolean {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return false;
  }
  if (url.hash !== "") return false;
  if (url.protocol === "https:") return true;
  if (url.protocol === "http:") return isLoopback(url);
  // Native apps' private-use schemes (com.example.app:/callback).
  return /^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(url.protocol);
}

/** Exact match; a loopback redirect (a desktop client) may use any port (RFC 8252 §7.3). */
function redirectMatches(registered: string[], presented: string): boolean {
  if (registered.includes(presented)) return true;
  let url: URL;
  try {
    url = new URL(presented);
  } catch {
    return false;
  }
  if (url.protocol !== "http:" || !isLoopback(url)) return false;
  return registered.some((r) => {
    const reg = new URL(r);
    return (
      reg.protocol === "http:" &&
      isLoopback(reg) &&
      reg.hostname === url.hostname &&
      reg.pathname === url.pathname &&
      reg.search === url.search
    );
  });
}

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
    if (
      !Array.isArray(uris) ||
      uris.length === 0 ||
      uris.length > 20 ||
      !uris.every((u) => typeof u === "string")
    ) {
      throw new OAuthError("invalid_redirect_uri", "redirect_uris: one or more URIs");
    }
    const bad = (uris as string[]).find((u) => !validRedirectUri(u));
    if (bad)
      throw new OAuthError("invalid_redirect_uri", `not an allowed redirect URI: ${bad.slice(0, 200)}`);
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
    const name =
      typeof b.client_name === "string" && b.client_name.trim() !== ""
        ? b.client_name.trim().slice(0, 200)
        : "unnamed client";
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
   * GET /oauth/authorize. A request whose client or redirect URI cannot be trusted is answered
   * with a page (never a redirect: that would be an open redirect); other problems go back to
   * the client's redirect URI as OAuth errors; a good request waits for the operator's consent.
   */
  async authorize(q: Record<string, string | undefined>): Promise<AuthorizeOutcome> {
    const page = (message: string): AuthorizeOutcome => ({ kind: "page", status: 400, message });
    if (!q.client_id) return page("client_id is missing");
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
    const back = (error: string, description: string): AuthorizeOutcome => ({
      kind: "redirect",
      location: this.redirectWith(q.redirect_uri!, { error, error_description: description, state: q.state }),
    });
    if (q.response_type !== "code") return back("unsupported_response_type", "response_type must be code");
    if (!q.code_challenge || q.code_challenge_method !== "S256") {
      return back("invalid_request", "PKCE with code_challenge_method S256 is required");
    }
    if (!/^[A-Za-z0-9_-]{43}$/.test(q.code_challenge))
      return back("invalid_request", "code_challenge is not an S256 challenge");
    if (q.resource !== undefined && q.resource !== this.resource) {
      return back("invalid_target", `resource must be ${this.resource}`);
    }
    const scopes = (q.scope ?? OAUTH_SCOPE).split(" ").filter((s) => s !== "");
    if (scopes.some((s) => s !== OAUTH_SCOPE))
      return back("invalid_scope", `the only scope is ${OAUTH_SCOPE}`);
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

  pendingRequests() {
    return this.deps.repo.pendingRequests(this.nowMs()).map((r) => this.requestView(r));
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
    if (challenge !== request.codeChallenge)
      throw new OAuthError("invalid_grant", "code_verifier does not match the challenge");
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

  // ---- the operator's lists

  clients() {
    return this.deps.repo.clients().map((c) => ({
      client_id: c.id,
      kind: c.kind,
      name: c.name,
      redirect_uris: c.redirectUris,
      created_at: c.createdAt,
    }));
  }

  grants() {
    return this.deps.repo.grants().map((g) => {
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
    });
  }
}
