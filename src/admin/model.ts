// The admin API contract: request and response schemas of `/admin/api`. The admin service's input
// and view types are derived from these schemas.
import { type Static, Type } from "@sinclair/typebox";
import { t } from "elysia";
import type { AuditEntry } from "../audit/audit-log";
import type { SandboxRequestView } from "../banks/sandbox/sql-request-log";
import type { Same } from "../core/same-type";
import { closed } from "../http/closed-body";

const uuid = t.String({ format: "uuid" });
const nullableInt = t.Union([t.Integer(), t.Null()]);
const nullableString = t.Union([t.String(), t.Null()]);
const NullableString = Type.Union([Type.String(), Type.Null()]);

// ---- requests

export const CreateCompanyBody = closed(
  t.Object({
    name: t.String(),
    inn: t.String(),
    kpp: t.Optional(nullableString),
  }),
);
export type CreateCompanyInput = Static<typeof CreateCompanyBody>;

export const CreateBankAccountBody = closed(
  t.Object({
    company_id: uuid,
    bank: t.String(),
    account_number: t.String(),
    bik: t.String(),
    currency: t.Optional(t.String()),
    alias: t.Optional(t.String()),
    credentials: t.Optional(t.Record(t.String(), t.Unknown())),
    environment: t.Optional(t.Union([t.Literal("production"), t.Literal("sandbox")])),
    sandbox: t.Optional(
      t.Object({ ops_per_day: t.Optional(t.Integer()), opening_balance: t.Optional(t.Number()) }),
    ),
  }),
);
export type CreateBankAccountInput = Static<typeof CreateBankAccountBody>;

export const TokenGrantBody = t.Object({
  bank_account_id: uuid,
  allow_read_statements: t.Optional(t.Boolean()),
  allow_send_payments: t.Optional(t.Boolean()),
});
export type TokenGrantInput = Static<typeof TokenGrantBody>;

const tokenSettings = {
  accounts: t.Optional(t.Array(TokenGrantBody)),
  allowed_ips: t.Optional(t.Array(t.String())),
  rate_limit_per_minute: t.Optional(nullableInt),
  expires_at: t.Optional(nullableString),
};

export const CreateTokenBody = closed(
  t.Object({
    company_id: uuid,
    name: t.String(),
    purpose: t.Union([t.Literal("integration"), t.Literal("mcp")]),
    mode: t.Optional(t.Union([t.Literal("live"), t.Literal("test")])),
    scope_read_statements: t.Optional(t.Boolean()),
    scope_send_payments: t.Optional(t.Boolean()),
    ...tokenSettings,
  }),
);
export type CreateTokenInput = Static<typeof CreateTokenBody>;

export const PatchTokenBody = closed(
  t.Object({
    name: t.Optional(t.String()),
    scopes: t.Optional(
      t.Object({ read_statements: t.Optional(t.Boolean()), send_payments: t.Optional(t.Boolean()) }),
    ),
    scope_read_statements: t.Optional(t.Boolean()),
    scope_send_payments: t.Optional(t.Boolean()),
    ...tokenSettings,
  }),
);
export type PatchTokenInput = Static<typeof PatchTokenBody>;

export const AuditLogQuery = t.Object({
  api_token_id: t.Optional(t.String()),
  action: t.Optional(t.String()),
  since: t.Optional(t.String()),
  until: t.Optional(t.String()),
  limit: t.Optional(t.Integer()),
  cursor: t.Optional(t.String()),
});
export type AuditLogQueryInput = Static<typeof AuditLogQuery>;

/** One page of an OAuth list (clients, requests, grants): newest first, `next_cursor` to go on. */
export const OAuthListQuery = t.Object({
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 500 })),
  cursor: t.Optional(t.String({ maxLength: 512 })),
});

export const IdParams = t.Object({ id: uuid });
export const CompanyFilterQuery = t.Object({ company_id: t.Optional(uuid) });
export const AccountFilterQuery = t.Object({ bank_account_id: t.Optional(uuid) });

export const UiOrderBody = closed(
  t.Object({ bank_account_id: uuid, date_from: t.String(), date_to: t.String() }),
);

export const AdminStatementsQuery = t.Object({
  company_id: t.Optional(uuid),
  bank_account_id: t.Optional(uuid),
  status: t.Optional(t.Union([t.Literal("processing"), t.Literal("ready"), t.Literal("failed")])),
  limit: t.Optional(t.Integer({ minimum: 1, maximum: 500 })),
  cursor: t.Optional(t.String()),
});

// ---- responses

export const CompanySchema = Type.Object({
  company_id: Type.String(),
  name: Type.String(),
  inn: Type.String(),
  kpp: NullableString,
  created_at: Type.String(),
});
export type CompanyView = Static<typeof CompanySchema>;

export const BankAccountSchema = Type.Object({
  bank_account_id: Type.String(),
  company_id: Type.String(),
  bank: Type.String(),
  alias: Type.String(),
  account_number_masked: Type.String(),
  bik: Type.String(),
  currency: Type.String(),
  sandbox: Type.Union([
    Type.Object({ ops_per_day: Type.Number(), opening_balance: Type.Number({ description: "Rubles" }) }),
    Type.Null(),
  ]),
  environment: Type.Union([Type.Literal("production"), Type.Literal("sandbox")]),
  credentials_status: Type.Union(
    [Type.Literal("active"), Type.Literal("consent_required"), Type.Literal("renewal_needed"), Type.Null()],
    { description: "The bank login's state; null: the account has no stored login" },
  ),
  credentials_message: NullableString,
  created_at: Type.String(),
});
export type BankAccountView = Static<typeof BankAccountSchema>;

export const OAuthApproveBody = closed(
  t.Object({
    company_id: uuid,
    accounts: t.Array(t.Object({ bank_account_id: uuid }), { minItems: 1, maxItems: 500 }),
    scope: t.Optional(t.String({ maxLength: 200, description: 'Narrower than asked: "" grants no scope' })),
  }),
);
export const RedirectToSchema = Type.Object({
  redirect_to: Type.String({
    description: "Where the operator's browser goes next: the client's redirect URI",
  }),
});

export const CredentialsBody = closed(t.Object({ credentials: t.Record(t.String(), t.Unknown()) }));

export const DiscoveredAccountsQuery = t.Object({ bank_account_id: uuid });
export const DiscoveredAccountsSchema = Type.Object({
  accounts: Type.Array(
    Type.Object({
      account_number: Type.String(),
      bik: Type.String(),
      currency: Type.String(),
      status: Type.String({ description: "The bank's word: Enabled, Disabled, …" }),
      bank_account_id: Type.Union([Type.String(), Type.Null()], {
        description: "The account in svc when it is already added",
      }),
    }),
  ),
});
export type DiscoveredAccountsView = Static<typeof DiscoveredAccountsSchema>;

export const ImportAccountsBody = closed(
  t.Object({
    bank_account_id: uuid,
    accounts: t.Array(
      t.Object({ account_number: t.String(), bik: t.String(), alias: t.Optional(t.String()) }),
      {
        minItems: 1,
        maxItems: 100,
      },
    ),
  }),
);
export type ImportAccountsInput = Static<typeof ImportAccountsBody>;

const TokenGrantSchema = Type.Object({
  bank_account_id: Type.String(),
  allow_read_statements: Type.Boolean(),
  allow_send_payments: Type.Boolean(),
});
export type TokenGrantView = Static<typeof TokenGrantSchema>;

export const TokenSchema = Type.Object({
  api_token_id: Type.String(),
  company_id: Type.String(),
  name: Type.String(),
  purpose: Type.Union([Type.Literal("integration"), Type.Literal("mcp")]),
  mode: Type.Union([Type.Literal("live"), Type.Literal("test")]),
  token_prefix: Type.String(),
  scopes: Type.Object({ read_statements: Type.Boolean(), send_payments: Type.Boolean() }),
  accounts: Type.Array(TokenGrantSchema),
  allowed_ips: Type.Array(Type.String()),
  rate_limit_per_minute: Type.Number(),
  rate_limit_is_default: Type.Boolean(),
  expires_at: NullableString,
  revoked_at: NullableString,
  created_at: Type.String(),
  last_used_at: NullableString,
});
export type TokenView = Static<typeof TokenSchema>;

export const CreatedTokenSchema = Type.Composite([
  TokenSchema,
  Type.Object({ token: Type.String({ description: "The raw token; shown only in this answer" }) }),
]);

export const CompanyListSchema = Type.Object({ companies: Type.Array(CompanySchema) });
export const BankAccountListSchema = Type.Object({ bank_accounts: Type.Array(BankAccountSchema) });
export const TokenListSchema = Type.Object({ tokens: Type.Array(TokenSchema) });

const AuditEntrySchema = Type.Object({
  id: Type.Integer(),
  at: Type.String(),
  actor: Type.String(),
  api_token_id: NullableString,
  mcp_session_id: NullableString,
  action: Type.String(),
  tool: NullableString,
  target: NullableString,
  arguments: Type.Unknown(),
  outcome: Type.String(),
  duration_ms: Type.Union([Type.Number(), Type.Null()]),
  request_id: NullableString,
  ip: NullableString,
  transport: NullableString,
  protocol_revision: NullableString,
});
export const AuditPageSchema = Type.Object({
  entries: Type.Array(AuditEntrySchema),
  next_cursor: NullableString,
});

const SandboxRequestSchema = Type.Object({
  at: Type.String(),
  bank_account_id: Type.String(),
  kind: Type.String(),
  date_from: NullableString,
  date_to: NullableString,
  client_ref: NullableString,
});
export const SandboxRequestListSchema = Type.Object({ requests: Type.Array(SandboxRequestSchema) });

// The audit log and the sandbox log keep their own record types (they live below the features);
// these fail to compile when a record and its schema drift apart.
const auditEntryMatches: Same<Static<typeof AuditEntrySchema>, AuditEntry> = true;
const sandboxRequestMatches: Same<Static<typeof SandboxRequestSchema>, SandboxRequestView> = true;
void auditEntryMatches;
void sandboxRequestMatches;
