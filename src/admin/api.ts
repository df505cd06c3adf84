// The admin API (`/admin/api`), exactly as the decisions document lists it.
import { Elysia, t } from "elysia";
import type { ErrorCode } from "../core/errors";
import type { SqliteSandboxRequestLog } from "../db/repos/sandbox-requests";
import { adminAuth } from "../http/admin-auth";
import { JSON_BODY, routeDoc } from "../http/docs";
import type { StatementService } from "../statements/service";
import type { AdminService } from "./service";

const uuid = t.String({ format: "uuid" });
const ADMIN_ERRORS: ErrorCode[] = [
  "invalid_token_format",
  "invalid_token",
  "invalid request body",
  "validation_error",
];
const doc = (summary: string, errors: ErrorCode[] = [], success?: Record<number, string>) =>
  routeDoc("admin", summary, [...ADMIN_ERRORS, ...errors], { security: "admin", success });

const grantSchema = t.Object({
  bank_account_id: uuid,
  allow_read_statements: t.Optional(t.Boolean()),
  allow_send_payments: t.Optional(t.Boolean()),
});
const nullableInt = t.Union([t.Integer(), t.Null()]);
const nullableString = t.Union([t.String(), t.Null()]);

export interface AdminApiDeps {
  admin: AdminService;
  statements: StatementService;
  sandboxLog: SqliteSandboxRequestLog;
  adminToken: string | null;
}

export function adminApi({ admin: service, statements, sandboxLog, adminToken }: AdminApiDeps) {
  return new Elysia({ prefix: "/admin/api" })
    .use(adminAuth(adminToken))
    .post("/companies", ({ body, actor, status }) => status(201, service.createCompany(body, actor)), {
      parse: JSON_BODY,
      body: t.Object({ name: t.String(), inn: t.String(), kpp: t.Optional(nullableString) }),
      detail: doc("Create a company", [], { 201: "Company created" }),
    })
    .get("/companies", () => ({ companies: service.listCompanies() }), { detail: doc("List companies") })
    .post(
      "/bank-accounts",
      ({ body, actor, status }) => status(201, service.createBankAccount(body, actor)),
      {
        parse: JSON_BODY,
        body: t.Object({
          company_id: uuid,
          bank: t.String(),
          account_number: t.String(),
          bik: t.String(),
          currency: t.Optional(t.String()),
          alias: t.Optional(t.String()),
          credentials: t.Optional(t.Record(t.String(), t.Unknown())),
          sandbox: t.Optional(
            t.Object({ ops_per_day: t.Optional(t.Integer()), opening_balance: t.Optional(t.Number()) }),
          ),
        }),
        detail: doc("Create a bank account", ["not_found"], { 201: "Account created" }),
      },
    )
    .get("/bank-accounts", ({ query }) => ({ bank_accounts: service.listBankAccounts(query.company_id) }), {
      query: t.Object({ company_id: t.Optional(uuid) }),
      detail: doc("List bank accounts"),
    })
    .post("/tokens", ({ body, actor, status }) => status(201, service.createToken(body, actor)), {
      parse: JSON_BODY,
      body: t.Object({
        company_id: uuid,
        name: t.String(),
        purpose: t.Union([t.Literal("integration"), t.Literal("mcp")]),
        mode: t.Optional(t.Union([t.Literal("live"), t.Literal("test")])),
        scope_read_statements: t.Optional(t.Boolean()),
        scope_send_payments: t.Optional(t.Boolean()),
        accounts: t.Optional(t.Array(grantSchema)),
        allowed_ips: t.Optional(t.Array(t.String())),
        rate_limit_per_minute: t.Optional(nullableInt),
        expires_at: t.Optional(nullableString),
      }),
      detail: doc("Create a token (the raw value is returned only here)", ["not_found"], {
        201: "Token created",
      }),
    })
    .get("/tokens", ({ query }) => ({ tokens: service.listTokens(query.company_id) }), {
      query: t.Object({ company_id: t.Optional(uuid) }),
      detail: doc("List tokens (never the raw value or its hash)"),
    })
    .patch("/tokens/:id", ({ params, body, actor }) => service.patchToken(params.id, body, actor), {
      params: t.Object({ id: uuid }),
      parse: JSON_BODY,
      body: t.Object({
        name: t.Optional(t.String()),
        scopes: t.Optional(
          t.Object({ read_statements: t.Optional(t.Boolean()), send_payments: t.Optional(t.Boolean()) }),
        ),
        scope_read_statements: t.Optional(t.Boolean()),
        scope_send_payments: t.Optional(t.Boolean()),
        accounts: t.Optional(t.Array(grantSchema)),
        allowed_ips: t.Optional(t.Array(t.String())),
        rate_limit_per_minute: t.Optional(nullableInt),
        expires_at: t.Optional(nullableString),
      }),
      detail: doc("Change a token", ["not_found"]),
    })
    .post("/tokens/:id/revoke", ({ params, actor }) => service.revokeToken(params.id, actor), {
      params: t.Object({ id: uuid }),
      detail: doc("Revoke a token", ["not_found"]),
    })
    .get("/audit-log", ({ query }) => service.auditLog(query), {
      query: t.Object({
        api_token_id: t.Optional(t.String()),
        action: t.Optional(t.String()),
        since: t.Optional(t.String()),
        until: t.Optional(t.String()),
        limit: t.Optional(t.Integer()),
        cursor: t.Optional(t.String()),
      }),
      detail: doc("Query the audit log, newest first"),
    })
    .post(
      "/bank-accounts/:id/balance/refresh",
      async ({ params, actor }) => {
        const view = await statements.refreshBalance(service.findBankAccount(params.id));
        service.recordAction("admin.balance.refresh", params.id, actor);
        return view;
      },
      {
        params: t.Object({ id: uuid }),
        detail: doc("Ask the bank for the balance now; returns the cached balance", [
          "not_found",
          "bank_error",
        ]),
      },
    )
    .post(
      "/statements",
      ({ body, actor, set }) => {
        const view = service.audited(
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
        parse: JSON_BODY,
        body: t.Object({ bank_account_id: uuid, date_from: t.String(), date_to: t.String() }),
        detail: doc('Order a statement via the UI (source "ui")', ["not_found", "bank_not_supported"], {
          201: "Ordered",
        }),
      },
    )
    .get(
      "/statements",
      ({ query }) =>
        statements.page({
          accountIds: query.bank_account_id
            ? [query.bank_account_id]
            : service.listBankAccounts(query.company_id).map((a) => a.bank_account_id),
          status: query.status,
          limit: query.limit ?? 50,
          cursor: query.cursor,
        }),
      {
        query: t.Object({
          company_id: t.Optional(uuid),
          bank_account_id: t.Optional(uuid),
          status: t.Optional(t.Union([t.Literal("processing"), t.Literal("ready"), t.Literal("failed")])),
          limit: t.Optional(t.Integer({ minimum: 1, maximum: 500 })),
          cursor: t.Optional(t.String()),
        }),
        detail: doc("List statements of every source, newest first"),
      },
    )
    .get("/sandbox/requests", ({ query }) => ({ requests: sandboxLog.list(query.bank_account_id) }), {
      query: t.Object({ bank_account_id: t.Optional(uuid) }),
      detail: doc("The sandbox bank's own log of the calls it received"),
    });
}
