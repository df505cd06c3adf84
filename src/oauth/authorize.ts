// Authorization requests: GET /oauth/authorize checks a client's request and keeps it for the
// operator, whose consent (approve: a grant of chosen accounts and a single-use code; deny) is the
// only answer that goes back to the client's redirect URI. The operator's list of waiting requests.
import { randomBytes } from "node:crypto";
import { generateToken, hashToken } from "../auth/tokens";
import { ApiError, validationError } from "../core/errors";
import { MetadataDocumentError } from "./cimd";
import type { OAuthClients } from "./clients";
import type { OAuthMetadata } from "./metadata";
import { type PageQuery, pageArgs, pageOf } from "./paging";
import {
  b64url,
  CODE_TTL_MS,
  NOT_EXCHANGED_PREFIX,
  OAUTH_SCOPE,
  type OAuthDeps,
  REQUEST_TTL_MS,
  randomId,
} from "./protocol";
import { LIMITS, redirectMatches } from "./redirect-uris";
import type { ClientRow, RequestRow } from "./repository";

export type AuthorizeOutcome =
  | { kind: "page"; status: number; message: string }
  | { kind: "redirect"; location: string };

/** Who acted in the admin, for the audit entries. */
type Actor = { requestId?: string | null; ip?: string | null };

export class AuthorizationRequests {
  constructor(
    private readonly deps: OAuthDeps,
    private readonly clients: OAuthClients,
    private readonly metadata: OAuthMetadata,
  ) {}

  private nowMs(): number {
    return this.deps.clock.now().getTime();
  }

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
      client = await this.clients.resolve(q.client_id);
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
    if (q.resource !== undefined && q.resource !== this.metadata.resource) {
      return page(`invalid_target: resource must be ${this.metadata.resource}`);
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
      resource: this.metadata.resource,
      status: "pending",
      codeHash: null,
      grantId: null,
      createdAtMs: this.nowMs(),
      expiresAtMs: this.nowMs() + REQUEST_TTL_MS,
    };
    this.deps.repo.insertRequest(row);
    return { kind: "redirect", location: `/admin/oauth/consent/${row.id}` };
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
    actor: Actor = {},
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
          tokenPrefix: NOT_EXCHANGED_PREFIX,
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
    return { redirect_to: this.metadata.redirectWith(request.redirectUri, { code, state: request.state }) };
  }

  deny(requestId: string, actor: Actor = {}): { redirect_to: string } {
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
      redirect_to: this.metadata.redirectWith(request.redirectUri, {
        error: "access_denied",
        error_description: "the operator denied access",
        state: request.state,
      }),
    };
  }
}
