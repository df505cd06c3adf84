// A stateful fake of Tochka Bank's API for tests: accounts, balances, asynchronous paged statements,
// payments for signing, consents, the OAuth 2.0 hybrid flow, JWT and sandbox bearers, and injected
// faults. Every API request it receives and every answer it gives is checked against the bank's
// OpenAPI document (tochka-contract.ts); the OAuth endpoints, which the document leaves out, are
// checked against the shapes of the bank's OAuth page. Problems land in `violations`.
import {
  bookedNet,
  type FakeTransaction,
  generateTransactions,
  renderTransaction,
  rubles,
} from "./fake-tochka-data";
import {
  GATEWAY_STATUSES,
  matchOperation,
  type OperationMatch,
  validateRequest,
  validateResponse,
} from "./tochka-contract";

export type { FakeAgent, FakeParty, FakeTaxFields, FakeTransaction } from "./fake-tochka-data";
export { generateTransactions };

/** The bearer the sandbox accepts; any other string there means "no permission" (sandbox page). */
export const SANDBOX_TOKEN = "sandbox.jwt.token";

export type FakeBase = "uapi" | "sandbox" | "auth";
export type PaymentStatus = "WaitingForCreate" | "Created" | "Paid" | "Canceled" | "Rejected";

export interface FakeTochkaOptions {
  /** GETs of a statement answered before it is ready: the first says Created, the rest Processing. Default 2. */
  pollsBeforeReady?: number;
  /** Transactions per statement page; a larger statement is split and linked with Links.next. */
  pageSize?: number;
  /** Lifetime of OAuth access tokens. Default 86400, as the bank's token answers say. */
  accessTtlSeconds?: number;
  /** Milliseconds since the epoch; lets a test move time for token expiry. Default Date.now. */
  now?: () => number;
}

export interface FakeAccountInput {
  /** "{20-digit number}/{9-digit BIK}". */
  accountId: string;
  /** Up to 9 characters. Default "300000092". */
  customerCode?: string;
  currency?: "RUB";
  /** Kopecks before the first transaction. */
  openingBalance: number;
  transactions?: FakeTransaction[];
  /** Which base serves the account. Default "both". */
  environment?: "production" | "sandbox" | "both";
}

export interface FakeRequest {
  base: FakeBase;
  method: string;
  /** Relative to the base: "/open-banking/v1.0/accounts" for the API, "/connect/token" for auth. */
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  /** The Authorization bearer value, or null. */
  bearer: string | null;
  /** Parsed JSON, form fields as an object, raw text when neither parses, undefined when empty. */
  body: unknown;
  /** The status answered (0 until the answer is made). */
  status: number;
}

export interface RequestMatch {
  method?: string;
  pathIncludes?: string;
  base?: FakeBase;
  /** How many matching requests it applies to. Default 1. */
  times?: number;
}

export interface FaultSpec extends RequestMatch {
  status: number;
  /** JSON body; defaults to an ErrorResponse for the status. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface FakePayment {
  requestId: string;
  base: "uapi" | "sandbox";
  /** Data of the PaymentForSignRequest as svc sent it. */
  document: Record<string, unknown>;
  status: PaymentStatus;
  errors: unknown[];
}

export interface FakeTochka {
  readonly url: string;
  readonly apiUrl: string;
  readonly sandboxUrl: string;
  readonly authUrl: string;
  readonly requests: FakeRequest[];
  readonly violations: string[];
  readonly payments: FakePayment[];
  /** grant_type=refresh_token requests received. */
  readonly refreshCount: number;
  /** Requests to /connect/token. */
  readonly tokenRequests: number;
  stop(): Promise<void>;
  addAccount(input: FakeAccountInput): void;
  /** A JWT from the internet bank; `permissions` default to all, `expiresAt` (ms) to never. */
  addJwt(token: string, options?: { permissions?: string[]; expiresAt?: number }): void;
  /** A deleted JWT: the bank answers 403 to it (JWT page). */
  revokeJwt(token: string): void;
  addOAuthClient(clientId: string, clientSecret: string): void;
  /** What the customer does on the consent page; "deny" redirects with error=access_denied. */
  setAuthorizationOutcome(outcome: "approve" | "deny"): void;
  expireAccessTokens(): void;
  statementError(accountId: string): void;
  breakBalances(accountId: string): void;
  fail(next: FaultSpec): void;
  delay(ms: number, match?: RequestMatch): void;
  setPaymentStatus(requestId: string, status: PaymentStatus, errors?: unknown[]): void;
  /** The account's transactions as the fake keeps them (sorted by day, ids filled in). */
  transactionsOf(accountId: string): FakeTransaction[];
  /** Kopecks: the opening balance plus every booked transaction. */
  closingBalanceOf(accountId: string): number;
}

// ---------------------------------------------------------------------------------------------
// Internal state

interface Account {
  accountId: string;
  customerCode: string;
  currency: string;
  openingBalance: number;
  transactions: FakeTransaction[];
  environment: "production" | "sandbox" | "both";
}

type TokenKind = "jwt" | "client" | "hybrid";

interface Token {
  kind: TokenKind;
  /** ms since the epoch; null for a JWT without an end. */
  expiresAt: number | null;
  revoked: boolean;
  clientId: string | null;
  /** null: every permission. */
  permissions: string[] | null;
}

interface Consent {
  consentId: string;
  clientId: string;
  status: "AwaitingAuthorisation" | "Authorised" | "Rejected" | "Revoked";
  permissions: string[];
  expirationDateTime?: string;
  created: string;
  userId: string;
}

interface AuthCode {
  clientId: string;
  redirectUri: string;
  consentId: string;
  state: string;
  expiresAt: number;
}

interface RefreshGrant {
  clientId: string;
  consentId: string;
}

interface Statement {
  statementId: string;
  base: "uapi" | "sandbox";
  accountId: string;
  start: string;
  end: string;
  created: string;
  polls: number;
  status: "Created" | "Processing" | "Ready" | "Error";
}

interface Answer {
  status: number;
  json?: unknown;
  text?: string;
  headers?: Record<string, string>;
}

const ACCOUNT_ID = /^\d{20}\/\d{9}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const ERROR_HELP_URL = "https://enter.tochka.com/doc/v2/redoc";
const CODE_TTL_MS = 5 * 60_000; // "Code ... срок действия — 5 минут" (terminology page)
const CONSENTS_TEMPLATE = "/consent/v1.0/consents";

/** Error names by status, for the ErrorResponse bodies the fake makes. */
const ERROR_NAMES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  424: "Failed Dependency",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/** The shape shared by ErrorResponse, Validation_ErrorResponse, HTTPNotFoundResponse and the 403/424 ones. */
function errorBody(status: number, message?: string): Record<string, unknown> {
  const name = ERROR_NAMES[status] ?? "Error";
  return {
    code: String(status),
    id: crypto.randomUUID(),
    message: name,
    Errors: [{ errorCode: name.replaceAll(" ", ""), message: message ?? name, url: ERROR_HELP_URL }],
  };
}

function randomToken(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return Array.from(bytes, (b) => alphabet[b % alphabet.length]).join("");
}

function matches(match: RequestMatch, base: FakeBase, method: string, path: string): boolean {
  return (
    (match.method === undefined || match.method.toUpperCase() === method) &&
    (match.base === undefined || match.base === base) &&
    (match.pathIncludes === undefined || path.includes(match.pathIncludes))
  );
}

/** Takes one use of the first rule matching the request, dropping it when used up. */
function takeRule<T extends RequestMatch & { left: number }>(
  rules: T[],
  base: FakeBase,
  method: string,
  path: string,
): T | null {
  const i = rules.findIndex((r) => matches(r, base, method, path));
  if (i < 0) return null;
  const rule = rules[i] as T;
  rule.left -= 1;
  if (rule.left <= 0) rules.splice(i, 1);
  return rule;
}

function parseBody(raw: string, contentType: string): unknown {
  if (raw === "") return undefined;
  if (contentType.includes("application/x-www-form-urlencoded")) {
    return Object.fromEntries(new URLSearchParams(raw));
  }
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------------
// The server

class FakeTochkaServer implements FakeTochka {
  readonly requests: FakeRequest[] = [];
  readonly violations: string[] = [];
  readonly payments: FakePayment[] = [];
  refreshCount = 0;
  tokenRequests = 0;

  private readonly server: ReturnType<typeof Bun.serve>;
  private readonly pollsBeforeReady: number;
  private readonly pageSize: number;
  private readonly accessTtlMs: number;
  private readonly now: () => number;

  private readonly accounts = new Map<string, Account>();
  private readonly tokens = new Map<string, Token>();
  private readonly clients = new Map<string, string>();
  private readonly consents = new Map<string, Consent>();
  private readonly codes = new Map<string, AuthCode>();
  private readonly refreshTokens = new Map<string, RefreshGrant>();
  private readonly statements = new Map<string, Statement>();
  private readonly erroringAccounts = new Set<string>();
  private readonly brokenBalances = new Set<string>();
  private readonly faults: (FaultSpec & { left: number })[] = [];
  private readonly delays: (RequestMatch & { ms: number; left: number })[] = [];
  private readonly sleepers = new Set<{ timer: ReturnType<typeof setTimeout>; wake: () => void }>();
  private authorization: "approve" | "deny" = "approve";
  private statementSeq = 0;

  constructor(options: FakeTochkaOptions) {
    this.pollsBeforeReady = options.pollsBeforeReady ?? 2;
    this.pageSize = options.pageSize ?? Number.POSITIVE_INFINITY;
    this.accessTtlMs = (options.accessTtlSeconds ?? 86_400) * 1000;
    this.now = options.now ?? Date.now;
    this.server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => this.handle(req) });
  }

  get url(): string {
    return `http://127.0.0.1:${this.server.port}`;
  }
  get apiUrl(): string {
    return `${this.url}/uapi`;
  }
  get sandboxUrl(): string {
    return `${this.url}/sandbox/v2`;
  }
  get authUrl(): string {
    return this.url;
  }

  async stop(): Promise<void> {
    for (const sleeper of this.sleepers) {
      clearTimeout(sleeper.timer);
      sleeper.wake();
    }
    this.sleepers.clear();
    await this.server.stop(true);
  }

  // --- setup -----------------------------------------------------------------------------------

  addAccount(input: FakeAccountInput): void {
    if (!ACCOUNT_ID.test(input.accountId))
      throw new Error(`accountId must be "{20 digits}/{BIK}": ${input.accountId}`);
    if (!Number.isSafeInteger(input.openingBalance)) throw new Error("openingBalance is integer kopecks");
    const transactions = [...(input.transactions ?? [])];
    transactions.forEach((tx, i) => {
      if (!DATE.test(tx.date)) throw new Error(`transaction ${i}: date must be YYYY-MM-DD`);
      if (!Number.isSafeInteger(tx.amount) || tx.amount <= 0)
        throw new Error(`transaction ${i}: amount is kopecks > 0`);
    });
    // Stable: same-day operations keep the order they were given in.
    transactions.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
    const number = input.accountId.slice(0, 20);
    this.accounts.set(input.accountId, {
      accountId: input.accountId,
      customerCode: input.customerCode ?? "300000092",
      currency: input.currency ?? "RUB",
      openingBalance: input.openingBalance,
      transactions: transactions.map((tx, i) => ({
        ...tx,
        transactionId: tx.transactionId ?? `${number}-${i + 1}`,
      })),
      environment: input.environment ?? "both",
    });
  }

  transactionsOf(accountId: string): FakeTransaction[] {
    return [...(this.accounts.get(accountId)?.transactions ?? [])];
  }

  closingBalanceOf(accountId: string): number {
    const account = this.accounts.get(accountId);
    if (!account) throw new Error(`no account ${accountId}`);
    return account.openingBalance + bookedNet(account.transactions);
  }

  addJwt(token: string, options: { permissions?: string[]; expiresAt?: number } = {}): void {
    this.tokens.set(token, {
      kind: "jwt",
      expiresAt: options.expiresAt ?? null,
      revoked: false,
      clientId: null,
      permissions: options.permissions ?? null,
    });
  }

  revokeJwt(token: string): void {
    const t = this.tokens.get(token);
    if (t === undefined) throw new Error(`unknown token ${token}`);
    t.revoked = true;
  }

  addOAuthClient(clientId: string, clientSecret: string): void {
    this.clients.set(clientId, clientSecret);
  }

  setAuthorizationOutcome(outcome: "approve" | "deny"): void {
    this.authorization = outcome;
  }

  expireAccessTokens(): void {
    const past = this.now() - 1;
    for (const t of this.tokens.values()) if (t.kind !== "jwt") t.expiresAt = past;
  }

  statementError(accountId: string): void {
    this.erroringAccounts.add(accountId);
  }

  breakBalances(accountId: string): void {
    this.brokenBalances.add(accountId);
  }

  fail(next: FaultSpec): void {
    this.faults.push({ ...next, left: next.times ?? 1 });
  }

  delay(ms: number, match: RequestMatch = {}): void {
    this.delays.push({ ...match, ms, left: match.times ?? 1 });
  }

  setPaymentStatus(requestId: string, status: PaymentStatus, errors: unknown[] = []): void {
    const payment = this.payments.find((p) => p.requestId === requestId);
    if (payment === undefined) throw new Error(`no payment ${requestId}`);
    payment.status = status;
    payment.errors = errors;
  }

  // --- dispatch --------------------------------------------------------------------------------

  private async handle(req: Request): Promise<Response> {
    const u = new URL(req.url);
    let base: FakeBase = "auth";
    let path = u.pathname;
    for (const [prefix, b] of [
      ["/uapi", "uapi"],
      ["/sandbox/v2", "sandbox"],
    ] as const) {
      if (u.pathname === prefix || u.pathname.startsWith(`${prefix}/`)) {
        base = b;
        path = u.pathname.slice(prefix.length);
      }
    }
    const raw = await req.text();
    const contentType = req.headers.get("content-type") ?? "";
    const authorization = req.headers.get("authorization");
    const bearer = authorization?.match(/^Bearer (.+)$/i)?.[1] ?? null;
    const record: FakeRequest = {
      base,
      method: req.method,
      path,
      query: Object.fromEntries(u.searchParams),
      headers: Object.fromEntries(req.headers),
      bearer,
      body: parseBody(raw, contentType),
      status: 0,
    };
    this.requests.push(record);
    const where = `${base} ${req.method} ${path}`;
    const problems: string[] = [];

    let operation: OperationMatch | null = null;
    if (base !== "auth") {
      const match = matchOperation(req.method, path);
      operation = typeof match === "string" ? null : match;
      problems.push(
        ...validateRequest({ method: req.method, path, query: u.searchParams, body: record.body }),
      );
      if (raw !== "" && !contentType.includes("application/json")) {
        problems.push(`request ${req.method} ${path}: Content-Type "${contentType}" is not application/json`);
      }
      if (typeof record.body === "string")
        problems.push(`request ${req.method} ${path}: the body is not JSON`);
      if (authorization !== null && bearer === null) {
        problems.push(`request ${req.method} ${path}: Authorization must be "Bearer <token>"`);
      }
    }
    this.violations.push(...problems.map((p) => `${base}: ${p}`));

    const delay = takeRule(this.delays, base, req.method, path);
    if (delay !== null) await this.sleep(delay.ms);

    let answer: Answer;
    const fault = takeRule(this.faults, base, req.method, path);
    if (fault !== null) {
      answer = {
        status: fault.status,
        json: fault.body ?? errorBody(fault.status),
        headers: fault.headers ?? {},
      };
    } else if (base === "auth") {
      answer = this.handleAuth(req.method, path, u.searchParams, record, where);
    } else if (operation === null) {
      answer = { status: 404, json: errorBody(404, `${req.method} ${path} is not a Tochka API method`) };
    } else {
      answer =
        this.authorize(base, bearer, operation) ??
        (problems.length > 0
          ? { status: 400, json: errorBody(400, problems.join("; ").slice(0, 600)) }
          : this.handleApi(base, operation, u, record.body, bearer));
    }

    if (base !== "auth" && operation !== null && answer.json !== undefined) {
      const found = validateResponse(
        { method: req.method, path, status: answer.status, body: answer.json },
        { gatewayStatuses: GATEWAY_STATUSES },
      );
      this.violations.push(...found.map((p) => `${base}: fake's ${p}`));
    }
    record.status = answer.status;
    const headers = new Headers(answer.headers);
    if (answer.json !== undefined) {
      headers.set("content-type", "application/json");
      return new Response(JSON.stringify(answer.json), { status: answer.status, headers });
    }
    return new Response(answer.text ?? null, { status: answer.status, headers });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const sleeper = {
        timer: setTimeout(() => {
          this.sleepers.delete(sleeper);
          resolve();
        }, ms),
        wake: resolve,
      };
      this.sleepers.add(sleeper);
    });
  }

  // --- API authorisation -------------------------------------------------------------------------

  /** null when the bearer may call the operation; otherwise the refusal. */
  private authorize(base: "uapi" | "sandbox", bearer: string | null, op: OperationMatch): Answer | null {
    if (base === "sandbox") {
      return bearer === SANDBOX_TOKEN
        ? null
        : { status: 403, json: errorBody(403, "no permission for the method") };
    }
    if (bearer === null) return { status: 401, json: errorBody(401, "no bearer token") };
    if (bearer === SANDBOX_TOKEN)
      return { status: 401, json: errorBody(401, "the sandbox token is not valid here") };
    const token = this.tokens.get(bearer);
    if (token === undefined) return { status: 401, json: errorBody(401, "unknown token") };
    if (token.revoked) return { status: 403, json: errorBody(403, "the token was deleted") };
    if (token.expiresAt !== null && token.expiresAt <= this.now()) {
      return { status: 401, json: errorBody(401, "the token has expired") };
    }
    // A client_credentials token only sets up consents; data needs a hybrid token or a JWT.
    const isConsents = op.template === CONSENTS_TEMPLATE;
    if (isConsents !== (token.kind === "client")) {
      return { status: 403, json: errorBody(403, `a ${token.kind} token cannot call ${op.template}`) };
    }
    const missing = op.permissions.filter(
      (p) => token.permissions !== null && !token.permissions.includes(p),
    );
    if (missing.length > 0)
      return { status: 403, json: errorBody(403, `missing permissions: ${missing.join(", ")}`) };
    return null;
  }

  // --- API methods -------------------------------------------------------------------------------

  private handleApi(
    base: "uapi" | "sandbox",
    op: OperationMatch,
    u: URL,
    body: unknown,
    bearer: string | null,
  ): Answer {
    const self = `${this.url}${u.pathname}${u.search}`;
    const ok = (data: unknown, links: Record<string, string> = {}, totalPages = 1): Answer => ({
      status: 200,
      json: { Data: data, Links: { self, ...links }, Meta: { totalPages } },
    });
    const data = isRecord(body) && isRecord(body["Data"]) ? body["Data"] : {};
    const nowIso = new Date(this.now()).toISOString();

    switch (op.template) {
      case "/open-banking/v1.0/accounts":
        return ok({ Account: this.visibleAccounts(base).map((a) => this.renderAccount(a, nowIso)) });

      case "/open-banking/v1.0/accounts/{accountId}/balances": {
        const account = this.account(base, op.params["accountId"] ?? "");
        if (account === null) return { status: 404, json: errorBody(404, "account not found") };
        const closing = account.openingBalance + bookedNet(account.transactions);
        return ok({
          Balance: [
            this.renderBalance(account, "OpeningAvailable", account.openingBalance, nowIso),
            this.renderBalance(account, "ClosingAvailable", closing, nowIso),
          ],
        });
      }

      case "/open-banking/v1.0/statements": {
        const s = isRecord(data["Statement"]) ? data["Statement"] : {};
        const accountId = String(s["accountId"] ?? "");
        const start = String(s["startDateTime"] ?? "");
        const end = String(s["endDateTime"] ?? "");
        if (this.account(base, accountId) === null)
          return { status: 404, json: errorBody(404, "account not found") };
        if (start > end) return { status: 400, json: errorBody(400, "startDateTime is after endDateTime") };
        this.statementSeq += 1;
        const statement: Statement = {
          statementId: String(100_000_000 + this.statementSeq),
          base,
          accountId,
          start,
          end,
          created: nowIso,
          polls: 0,
          status: "Created",
        };
        this.statements.set(statement.statementId, statement);
        return ok({ Statement: this.statementHeader(statement) });
      }

      case "/open-banking/v1.0/accounts/{accountId}/statements/{statementId}":
        return this.getStatement(base, op, u, ok);

      case "/payment/v1.0/for-sign": {
        const accountId = `${String(data["accountCode"])}/${String(data["bankCode"])}`;
        if (this.account(base, accountId) === null)
          return { status: 404, json: errorBody(404, "account not found") };
        const requestId = `openapi-${crypto.randomUUID()}`;
        this.payments.push({ requestId, base, document: { ...data }, status: "Created", errors: [] });
        return ok({ requestId, redirectURL: `${this.url}/sign/${requestId}` });
      }

      case "/payment/v1.0/status/{requestId}": {
        const payment = this.payments.find((p) => p.requestId === op.params["requestId"] && p.base === base);
        if (payment === undefined) return { status: 404, json: errorBody(404, "payment not found") };
        return ok({ requestId: payment.requestId, status: payment.status, errors: payment.errors });
      }

      case CONSENTS_TEMPLATE: {
        const token = base === "uapi" && bearer !== null ? this.tokens.get(bearer) : undefined;
        const consent: Consent = {
          consentId: crypto.randomUUID(),
          clientId: token?.clientId ?? "sandbox",
          status: "AwaitingAuthorisation",
          permissions: Array.isArray(data["permissions"]) ? data["permissions"].map(String) : [],
          created: nowIso,
          userId: crypto.randomUUID(),
          ...(typeof data["expirationDateTime"] === "string"
            ? { expirationDateTime: data["expirationDateTime"] }
            : {}),
        };
        this.consents.set(consent.consentId, consent);
        // The document declares ConsentListResponse here (Data.Consent[]), although the OAuth page's
        // example shows a bare Data object. The fake answers what the document declares.
        return ok({ Consent: [this.renderConsent(consent)] });
      }

      default:
        return {
          status: 404,
          json: errorBody(404, `${op.method} ${op.template} is not implemented by the fake`),
        };
    }
  }

  private getStatement(
    base: "uapi" | "sandbox",
    op: OperationMatch,
    u: URL,
    ok: (data: unknown, links?: Record<string, string>, totalPages?: number) => Answer,
  ): Answer {
    const statement = this.statements.get(op.params["statementId"] ?? "");
    if (
      statement === undefined ||
      statement.base !== base ||
      statement.accountId !== op.params["accountId"]
    ) {
      return { status: 404, json: errorBody(404, "statement not found") };
    }
    if (statement.status === "Created" || statement.status === "Processing") {
      statement.polls += 1;
      if (statement.polls > this.pollsBeforeReady) {
        statement.status = this.erroringAccounts.has(statement.accountId) ? "Error" : "Ready";
      } else {
        statement.status = statement.polls === 1 && this.pollsBeforeReady > 1 ? "Created" : "Processing";
      }
    }
    if (statement.status !== "Ready") return ok({ Statement: [this.statementHeader(statement)] });

    const account = this.accounts.get(statement.accountId) as Account;
    const before = account.transactions.filter((tx) => tx.date < statement.start);
    const within = account.transactions.filter(
      (tx) => tx.date >= statement.start && tx.date <= statement.end,
    );
    const startBalance = account.openingBalance + bookedNet(before);
    const endBalance =
      startBalance + bookedNet(within) + (this.brokenBalances.has(account.accountId) ? 1 : 0);

    const totalPages = Math.max(1, Math.ceil(within.length / this.pageSize));
    const pageParam = u.searchParams.get("page");
    const page = pageParam === null ? 1 : Number(pageParam);
    if (!Number.isInteger(page) || page < 1)
      return { status: 400, json: errorBody(400, "page must be a positive integer") };
    if (page > totalPages) return { status: 404, json: errorBody(404, `no page ${page} of ${totalPages}`) };
    const from = Number.isFinite(this.pageSize) ? (page - 1) * this.pageSize : 0;
    const slice = Number.isFinite(this.pageSize) ? within.slice(from, from + this.pageSize) : within;

    // LinkModel requires only `self` and does not set additionalProperties, so `next` is allowed.
    // The document declares no page parameter: clients are expected to follow Links.next as given.
    const links: Record<string, string> =
      page < totalPages
        ? {
            next: `${this.url}${base === "uapi" ? "/uapi" : "/sandbox/v2"}/open-banking/v1.0/accounts/${statement.accountId}/statements/${statement.statementId}?page=${page + 1}`,
          }
        : {};
    return ok(
      {
        Statement: [
          {
            ...this.statementHeader(statement),
            startDateBalance: rubles(startBalance),
            endDateBalance: rubles(endBalance),
            Transaction: slice.map((tx) => renderTransaction(tx, account.currency)),
          },
        ],
      },
      links,
      totalPages,
    );
  }

  private visibleAccounts(base: "uapi" | "sandbox"): Account[] {
    const env = base === "uapi" ? "production" : "sandbox";
    return [...this.accounts.values()].filter((a) => a.environment === "both" || a.environment === env);
  }

  private account(base: "uapi" | "sandbox", accountId: string): Account | null {
    return this.visibleAccounts(base).find((a) => a.accountId === accountId) ?? null;
  }

  private renderAccount(a: Account, nowIso: string): Record<string, unknown> {
    return {
      customerCode: a.customerCode,
      accountId: a.accountId,
      status: "Enabled",
      statusUpdateDateTime: nowIso,
      currency: a.currency,
      accountType: "Business",
      accountSubType: "CurrentAccount",
      registrationDate: "2020-01-15",
      accountDetails: [
        {
          schemeName: "RU.CBR.AccountNumber",
          identification: a.accountId.slice(0, 20),
          name: "Основной текущий счёт",
        },
      ],
    };
  }

  private renderBalance(a: Account, type: string, kopecks: number, nowIso: string): Record<string, unknown> {
    return {
      accountId: a.accountId,
      creditDebitIndicator: kopecks < 0 ? "Debit" : "Credit",
      type,
      dateTime: nowIso,
      Amount: { amount: rubles(Math.abs(kopecks)), currency: a.currency },
    };
  }

  private statementHeader(s: Statement): Record<string, unknown> {
    return {
      accountId: s.accountId,
      statementId: s.statementId,
      status: s.status,
      startDateTime: s.start,
      endDateTime: s.end,
      creationDateTime: s.created,
    };
  }

  private renderConsent(c: Consent): Record<string, unknown> {
    return {
      status: c.status,
      creationDateTime: c.created,
      statusUpdateDateTime: c.created,
      permissions: c.permissions,
      consentId: c.consentId,
      applicationName: "svc",
      clientId: c.clientId,
      ...(c.expirationDateTime === undefined ? {} : { expirationDateTime: c.expirationDateTime }),
    };
  }

  // --- OAuth 2.0 (algoritm-raboty-po-oauth-2.0) -----------------------------------------------------

  private handleAuth(
    method: string,
    path: string,
    query: URLSearchParams,
    record: FakeRequest,
    where: string,
  ): Answer {
    const violation = (message: string) => this.violations.push(`auth: ${where}: ${message}`);
    if (method === "POST" && path === "/connect/token") return this.token(record, violation);
    if (method === "GET" && path === "/connect/authorize") return this.authorizeConsent(query, violation);
    if (method === "GET" && path.startsWith("/sign/")) {
      return {
        status: 200,
        text: "<!doctype html><title>Подписание платежа</title>",
        headers: { "content-type": "text/html" },
      };
    }
    violation("no such endpoint at the auth base");
    return { status: 404, json: { error: "not_found" } };
  }

  private token(record: FakeRequest, violation: (message: string) => void): Answer {
    this.tokenRequests += 1;
    const contentType = record.headers["content-type"] ?? "";
    if (!contentType.includes("application/x-www-form-urlencoded")) {
      violation(`Content-Type "${contentType}" is not application/x-www-form-urlencoded`);
      return { status: 400, json: { error: "invalid_request" } };
    }
    const form = (isRecord(record.body) ? record.body : {}) as Record<string, string>;
    const grant = form["grant_type"] ?? "";
    const required: Record<string, string[]> = {
      client_credentials: ["client_id", "client_secret", "scope"],
      authorization_code: ["client_id", "client_secret", "code", "redirect_uri", "scope"],
      refresh_token: ["client_id", "client_secret", "refresh_token"],
    };
    const fields = required[grant];
    if (fields === undefined) {
      violation(`grant_type "${grant}" is not one the bank documents`);
      return { status: 400, json: { error: "unsupported_grant_type" } };
    }
    const missing = fields.filter((f) => (form[f] ?? "") === "");
    if (missing.length > 0) {
      violation(`${grant} without ${missing.join(", ")}`);
      return { status: 400, json: { error: "invalid_request" } };
    }
    const clientId = form["client_id"] as string;
    if (this.clients.get(clientId) !== form["client_secret"])
      return { status: 401, json: { error: "invalid_client" } };
    const ttl = Math.round(this.accessTtlMs / 1000);

    if (grant === "client_credentials") {
      const accessToken = this.issue("client", clientId, null);
      return { status: 200, json: { token_type: "bearer", access_token: accessToken, expires_in: ttl } };
    }
    if (grant === "authorization_code") {
      const code = this.codes.get(form["code"] as string);
      // Single use: a code is gone once presented, whether or not the exchange succeeds.
      this.codes.delete(form["code"] as string);
      if (
        code === undefined ||
        code.clientId !== clientId ||
        code.redirectUri !== form["redirect_uri"] ||
        code.expiresAt <= this.now()
      ) {
        return { status: 400, json: { error: "invalid_grant" } };
      }
      return { status: 200, json: this.hybridPair(clientId, code.consentId, code.state) };
    }
    this.refreshCount += 1;
    const refresh = form["refresh_token"] as string;
    const grantFor = this.refreshTokens.get(refresh);
    if (grantFor === undefined || grantFor.clientId !== clientId)
      return { status: 400, json: { error: "invalid_grant" } };
    // Rotation: the presented refresh token dies now; only the new one is good.
    this.refreshTokens.delete(refresh);
    return { status: 200, json: this.hybridPair(clientId, grantFor.consentId, null) };
  }

  private hybridPair(clientId: string, consentId: string, state: string | null): Record<string, unknown> {
    const consent = this.consents.get(consentId) as Consent;
    const accessToken = this.issue("hybrid", clientId, consent.permissions);
    const refreshToken = randomToken();
    this.refreshTokens.set(refreshToken, { clientId, consentId });
    return {
      access_token: accessToken,
      refresh_token: refreshToken,
      token_type: "bearer",
      expires_in: Math.round(this.accessTtlMs / 1000),
      state,
      user_id: consent.userId,
    };
  }

  private issue(kind: TokenKind, clientId: string, permissions: string[] | null): string {
    const token = randomToken();
    this.tokens.set(token, {
      kind,
      expiresAt: this.now() + this.accessTtlMs,
      revoked: false,
      clientId,
      permissions,
    });
    return token;
  }

  /** The customer's visit to the consent page, answered at once with the redirect back. */
  private authorizeConsent(query: URLSearchParams, violation: (message: string) => void): Answer {
    const missing = ["client_id", "response_type", "state", "redirect_uri", "scope", "consent_id"].filter(
      (p) => (query.get(p) ?? "") === "",
    );
    if (missing.length > 0) violation(`missing ${missing.join(", ")}`);
    if (query.get("response_type") !== "code") violation(`response_type must be "code"`);
    const clientId = query.get("client_id") ?? "";
    const consent = this.consents.get(query.get("consent_id") ?? "");
    let redirect: URL;
    try {
      redirect = new URL(query.get("redirect_uri") ?? "");
    } catch {
      violation("redirect_uri is not an absolute URI");
      return { status: 400, text: "invalid redirect_uri" };
    }
    if (!this.clients.has(clientId) || consent === undefined || consent.clientId !== clientId) {
      return { status: 400, text: "unknown client or consent" };
    }
    const state = query.get("state") ?? "";
    redirect.searchParams.set("state", state);
    consent.status = this.authorization === "approve" ? "Authorised" : "Rejected";
    if (this.authorization === "deny") {
      redirect.searchParams.set("error", "access_denied");
    } else {
      const code = randomToken();
      this.codes.set(code, {
        clientId,
        redirectUri: query.get("redirect_uri") ?? "",
        consentId: consent.consentId,
        state,
        expiresAt: this.now() + CODE_TTL_MS,
      });
      redirect.searchParams.set("code", code);
    }
    return { status: 302, headers: { location: redirect.toString() } };
  }
}

/** Starts the fake on a free port of 127.0.0.1. Call stop() when done. */
export function startFakeTochka(options: FakeTochkaOptions = {}): FakeTochka {
  return new FakeTochkaServer(options);
}
