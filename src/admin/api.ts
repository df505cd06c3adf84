// The admin API (`/admin/api`), exactly as the decisions document lists it.
import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { SqlSandboxRequestLog } from "../banks/sandbox/sql-request-log";
import type { ErrorCode } from "../core/errors";
import { adminAuth, type BearerRefusals } from "../http/admin-auth";
import { bodyPolicyOption } from "../http/body-policy";
import { refuseUnknownFields } from "../http/closed-body";
import { JSON_BODY, routeDoc, type SuccessDoc } from "../http/docs";
import type { OAuthService } from "../oauth/service";
import { type AccountCoverage, CoverageQuery, CoverageSchema } from "../statements/account-coverage";
import { BalanceSchema, StatementPageSchema, StatementSchema } from "../statements/model";
import type { StatementService } from "../statements/service";
import { SyncSchema, SyncSettingsBody } from "../sync/model";
import type { SyncService } from "../sync/service";
import type { AdminServices } from "./areas";
import {
  AccountFilterQuery,
  AdminStatementsQuery,
  AuditLogQuery,
  AuditPageSchema,
  BankAccountListSchema,
  BankAccountSchema,
  CompanyFilterQuery,
  CompanyListSchema,
  CompanySchema,
  CreateBankAccountBody,
  CreateCompanyBody,
  CreatedTokenSchema,
  CreateTokenBody,
  CredentialsBody,
  DiscoveredAccountsQuery,
  DiscoveredAccountsSchema,
  IdParams,
  ImportAccountsBody,
  OAuthApproveBody,
  OAuthListQuery,
  PatchTokenBody,
  RedirectToSchema,
  SandboxRequestListSchema,
  TokenListSchema,
  TokenSchema,
  UiOrderBody,
} from "./model";

const ADMIN_ERRORS: ErrorCode[] = [
  "invalid_token_format",
  "invalid_token",
  "invalid request body",
  "validation_error",
];
// Responses documented from the model's schemas, not validated at run time (see statements/routes.ts).
const doc = (summary: string, errors: ErrorCode[], success: Record<number, SuccessDoc>) =>
  routeDoc("admin", summary, [...ADMIN_ERRORS, ...errors], { security: "admin", success });
const ok = (schema: SuccessDoc["schema"], description = "OK") => ({ 200: { description, schema } });

export interface AdminApiDeps {
  admin: AdminServices;
  statements: StatementService;
  /** Accounts that keep themselves fresh (decisions §16), and the pass that runs them now. */
  sync: { service: SyncService; kick: () => void };
  coverage: AccountCoverage;
  sandboxLog: SqlSandboxRequestLog;
  adminToken: string | null;
  oauth: OAuthService;
  /** Wrong bearers: counted per client address and audited once per window. */
  refusals: BearerRefusals;
  /** The 1C:DirectBank settings file of a token and account (directbank/service.ts). */
  directbankSettings: (apiTokenId: string, bankAccountId?: string, version?: string) => string;
}

const DirectBankSettingsQuery = Type.Object({
  bank_account_id: Type.Optional(Type.String({ format: "uuid" })),
  version: Type.Optional(Type.String()),
});

export function adminApi({
  admin,
  statements,
  sync,
  coverage,
  sandboxLog,
  adminToken,
  oauth,
  refusals,
  directbankSettings,
}: AdminApiDeps) {
  return (
    new Elysia({ prefix: "/admin/api" })
      .use(bodyPolicyOption)
      .use(adminAuth(adminToken, refusals))
      .post("/companies", ({ body, actor, status }) => status(201, admin.companies.create(body, actor)), {
        bodyPolicy: JSON_BODY,
        body: CreateCompanyBody,
        transform: refuseUnknownFields(CreateCompanyBody),
        detail: doc("Create a company", [], {
          201: { description: "Company created", schema: CompanySchema },
        }),
      })
      .get("/companies", () => ({ companies: admin.companies.list() }), {
        detail: doc("List companies", [], ok(CompanyListSchema)),
      })
      .post(
        "/bank-accounts",
        async ({ body, actor, status }) => status(201, await admin.accounts.createVerified(body, actor)),
        {
          bodyPolicy: JSON_BODY,
          body: CreateBankAccountBody,
          transform: refuseUnknownFields(CreateBankAccountBody),
          detail: doc("Create a bank account", ["not_found"], {
            201: { description: "Account created", schema: BankAccountSchema },
          }),
        },
      )
      .get("/bank-accounts", ({ query }) => ({ bank_accounts: admin.accounts.list(query.company_id) }), {
        query: CompanyFilterQuery,
        detail: doc("List bank accounts", [], ok(BankAccountListSchema)),
      })
      .put(
        "/bank-accounts/:id/credentials",
        ({ params, body, actor }) => admin.bankLogins.replaceCredentials(params.id, body.credentials, actor),
        {
          bodyPolicy: JSON_BODY,
          params: IdParams,
          body: CredentialsBody,
          transform: refuseUnknownFields(CredentialsBody),
          detail: doc(
            "Replace the bank login of the account's connection (shared by the accounts reached through it)",
            ["not_found"],
            ok(BankAccountSchema),
          ),
        },
      )
      .post(
        "/bank-accounts/:id/bank-consent",
        async ({ params, actor }) => ({
          authorize_url: await admin.bankLogins.startConsent(params.id, actor),
        }),
        {
          params: IdParams,
          detail: doc(
            "Start the bank's consent flow of an OAuth login: open authorize_url in the browser; the bank returns to /admin/banks/{bank}/callback",
            ["not_found", "bank_not_supported", "bank_error"],
            ok(Type.Object({ authorize_url: Type.String() })),
          ),
        },
      )
      .get(
        "/banks/:bank/accounts",
        ({ params, query }) =>
          admin.bankLogins.discover(
            admin.accounts.atBank(query.bank_account_id, params.bank).bank_account_id,
          ),
        {
          query: DiscoveredAccountsQuery,
          detail: doc(
            "The customer's accounts the bank shows through an existing account's login",
            ["not_found", "bank_not_supported", "bank_error"],
            ok(DiscoveredAccountsSchema),
          ),
        },
      )
      .post(
        "/banks/:bank/accounts/import",
        async ({ params, body, actor, status }) => {
          admin.accounts.atBank(body.bank_account_id, params.bank);
          return status(201, { bank_accounts: await admin.bankLogins.import(body, actor) });
        },
        {
          bodyPolicy: JSON_BODY,
          body: ImportAccountsBody,
          transform: refuseUnknownFields(ImportAccountsBody),
          detail: doc(
            "Add accounts the bank shows through an existing account's login (same company, environment and login)",
            ["not_found", "conflict", "bank_not_supported", "bank_error"],
            { 201: { description: "Accounts added", schema: BankAccountListSchema } },
          ),
        },
      )
      .post("/tokens", ({ body, actor, status }) => status(201, admin.tokens.create(body, actor)), {
        bodyPolicy: JSON_BODY,
        body: CreateTokenBody,
        transform: refuseUnknownFields(CreateTokenBody),
        detail: doc("Create a token (the raw value is returned only here)", ["not_found"], {
          201: { description: "Token created", schema: CreatedTokenSchema },
        }),
      })
      .get("/tokens", ({ query }) => ({ tokens: admin.tokens.list(query.company_id) }), {
        query: CompanyFilterQuery,
        detail: doc("List tokens (never the raw value or its hash)", [], ok(TokenListSchema)),
      })
      .patch("/tokens/:id", ({ params, body, actor }) => admin.tokens.patch(params.id, body, actor), {
        params: IdParams,
        bodyPolicy: JSON_BODY,
        body: PatchTokenBody,
        transform: refuseUnknownFields(PatchTokenBody),
        detail: doc("Change a token", ["not_found"], ok(TokenSchema, "The token as changed")),
      })
      .post("/tokens/:id/revoke", ({ params, actor }) => admin.tokens.revoke(params.id, actor), {
        params: IdParams,
        detail: doc("Revoke a token", ["not_found"], ok(TokenSchema, "The revoked token")),
      })
      .get(
        "/tokens/:id/directbank-settings",
        ({ params, query, set }) => {
          const xml = directbankSettings(params.id, query.bank_account_id, query.version);
          set.headers["content-type"] = "application/xml; charset=utf-8";
          set.headers["content-disposition"] = 'attachment; filename="directbank-settings.xml"';
          // The standard's files carry a BOM.
          return `\uFEFF${xml}`;
        },
        {
          params: IdParams,
          query: DirectBankSettingsQuery,
          detail: doc(
            "1C:DirectBank settings file (Settings, dockind 06) for a token and account",
            ["not_found", "validation_error"],
            {
              200: {
                description: "The settings XML as an attachment",
                schema: Type.String(),
                mediaTypes: ["application/xml"],
              },
            },
          ),
        },
      )
      .get("/audit-log", ({ query }) => admin.audit.page(query), {
        query: AuditLogQuery,
        detail: doc("Query the audit log, newest first", [], ok(AuditPageSchema)),
      })
      .get("/bank-accounts/:id/sync", ({ params }) => sync.service.view(params.id), {
        params: IdParams,
        detail: doc(
          "The account's sync: whether svc orders its statements itself",
          ["not_found"],
          ok(SyncSchema),
        ),
      })
      .put(
        "/bank-accounts/:id/sync",
        ({ params, body, actor }) => {
          const view = admin.audit.audited(
            "admin.account.sync",
            actor,
            body,
            () => sync.service.configure(params.id, body),
            (v) => v.bank_account_id,
          );
          if (view.enabled) sync.kick();
          return view;
        },
        {
          params: IdParams,
          bodyPolicy: JSON_BODY,
          body: SyncSettingsBody,
          detail: doc(
            'Switch the account\'s sync on or off and tune it: svc orders the missing days since `since` in pieces of at most 31 days, then every interval the days from the last covered one to today (source "sync")',
            ["not_found", "bank_not_supported"],
            ok(SyncSchema),
          ),
        },
      )
      .get(
        "/bank-accounts/:id/coverage",
        ({ params, query }) => coverage.of(admin.accounts.find(params.id).id, query.date_from, query.date_to),
        {
          params: IdParams,
          query: CoverageQuery,
          detail: doc(
            "Which days of a period svc holds in full (covered), as of a time during the day (partial) or not at all (missing); at most 366 days",
            ["not_found"],
            ok(CoverageSchema),
          ),
        },
      )
      .post(
        "/bank-accounts/:id/balance/refresh",
        async ({ params, actor }) => {
          const view = await statements.refreshBalance(admin.accounts.find(params.id));
          admin.audit.record("admin.balance.refresh", params.id, actor);
          return view;
        },
        {
          params: IdParams,
          detail: doc(
            "Ask the bank for the balance now; returns the cached balance",
            ["not_found", "bank_error"],
            ok(BalanceSchema),
          ),
        },
      )
      .post(
        "/statements",
        ({ body, actor, set }) => {
          const view = admin.audit.audited(
            "admin.statement.order",
            actor,
            body,
            () => statements.orderFromUi(body.bank_account_id, body.date_from, body.date_to),
            (v) => v.statement_id,
          );
          set.status = 201;
          return view;
        },
        {
          bodyPolicy: JSON_BODY,
          body: UiOrderBody,
          transform: refuseUnknownFields(UiOrderBody),
          detail: doc('Order a statement via the UI (source "ui")', ["not_found", "bank_not_supported"], {
            201: { description: "Ordered", schema: StatementSchema },
          }),
        },
      )
      .get(
        "/statements",
        ({ query }) =>
          statements.page({
            accountIds: query.bank_account_id
              ? [query.bank_account_id]
              : admin.accounts.list(query.company_id).map((a) => a.bank_account_id),
            status: query.status,
            limit: query.limit ?? 50,
            cursor: query.cursor,
          }),
        {
          query: AdminStatementsQuery,
          detail: doc("List statements of every source, newest first", [], ok(StatementPageSchema)),
        },
      )
      // ---- OAuth: the consents agent hosts ask for, their clients and grants (decisions §12)
      .get("/oauth/requests", ({ query }) => oauth.requests.pendingRequests(query), {
        query: OAuthListQuery,
        detail: doc(
          "Authorization requests waiting for the operator's consent, newest first, in pages (limit, cursor)",
          [],
          ok(
            Type.Object({
              requests: Type.Array(Type.Unknown()),
              next_cursor: Type.Union([Type.String(), Type.Null()]),
            }),
          ),
        ),
      })
      .post(
        "/oauth/requests/:request_id/approve",
        ({ params, body, actor }) => oauth.requests.approve(params.request_id, body, actor),
        {
          bodyPolicy: JSON_BODY,
          body: OAuthApproveBody,
          transform: refuseUnknownFields(OAuthApproveBody),
          detail: doc(
            "Approve: the client gets the chosen company's chosen accounts (read-only); redirect_to carries the code",
            ["not_found", "conflict"],
            ok(RedirectToSchema),
          ),
        },
      )
      .post(
        "/oauth/requests/:request_id/deny",
        ({ params, actor }) => oauth.requests.deny(params.request_id, actor),
        {
          detail: doc("Deny: redirect_to carries error=access_denied", ["not_found"], ok(RedirectToSchema)),
        },
      )
      .get("/oauth/clients", ({ query }) => oauth.clients.list(query), {
        query: OAuthListQuery,
        detail: doc(
          "OAuth clients (registered or known by their metadata document), newest first, in pages (limit, cursor)",
          [],
          ok(
            Type.Object({
              clients: Type.Array(Type.Unknown()),
              next_cursor: Type.Union([Type.String(), Type.Null()]),
            }),
          ),
        ),
      })
      .get("/oauth/grants", ({ query }) => oauth.tokens.grants(query), {
        query: OAuthListQuery,
        detail: doc(
          "Grants: connected apps, their company and accounts, newest first, in pages (limit, cursor)",
          [],
          ok(
            Type.Object({
              grants: Type.Array(Type.Unknown()),
              next_cursor: Type.Union([Type.String(), Type.Null()]),
            }),
          ),
        ),
      })
      .post(
        "/oauth/grants/:id/revoke",
        ({ params, actor }) => {
          const grant = oauth.tokens.revokeGrant(params.id);
          admin.audit.record("admin.oauth.revoke", params.id, actor);
          return { grant_id: grant.id, revoked_at: grant.revokedAt };
        },
        {
          detail: doc(
            "Revoke a grant: its tokens stop working from the next request",
            ["not_found"],
            ok(Type.Unknown()),
          ),
        },
      )
      .get("/sandbox/requests", ({ query }) => ({ requests: sandboxLog.list(query.bank_account_id) }), {
        query: AccountFilterQuery,
        detail: doc("The sandbox bank's own log of the calls it received", [], ok(SandboxRequestListSchema)),
      })
  );
}
