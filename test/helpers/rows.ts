// Rows as the repositories take them, for tests of the stores themselves.
import type { BankAccountRow, CompanyRow } from "../../src/db/repos/accounts";
import type { ApiTokenRow } from "../../src/db/repos/tokens";
import type { StatementOperation } from "../../src/formats/types";

/** A live integration token of company c1 that reads statements; `over` changes any field. */
export function tokenRow(id: string, over: Partial<ApiTokenRow> = {}): ApiTokenRow {
  return {
    id,
    companyId: "c1",
    name: `токен ${id}`,
    purpose: "integration",
    mode: "live",
    tokenHash: `hash-${id}`,
    tokenPrefix: `svc_live_${id}`,
    scopeReadStatements: true,
    scopeSendPayments: false,
    allowedIps: [],
    rateLimitPerMinute: null,
    expiresAt: null,
    revokedAt: null,
    createdAt: "2026-11-20T09:00:00.000Z",
    lastUsedAt: null,
    oauthGrantId: null,
    ...over,
  };
}

/** Sandbox account acc1 of company c1; `over` changes any field. */
export function accountRow(over: Partial<BankAccountRow> = {}): BankAccountRow {
  return {
    id: "acc1",
    companyId: "c1",
    bank: "sandbox",
    accountNumber: "40702810000000000001",
    bik: "044525225",
    currency: "RUB",
    alias: "main",
    environment: "production",
    connectionId: null,
    sandboxOpsPerDay: null,
    sandboxOpeningBalance: null,
    createdAt: "2026-11-20T09:00:00.000Z",
    ...over,
  };
}

/** Company c1. */
export function companyRow(over: Partial<CompanyRow> = {}): CompanyRow {
  return {
    id: "c1",
    name: "ООО Ромашка",
    inn: "7719617469",
    kpp: null,
    createdAt: "2026-11-20T09:00:00.000Z",
    ...over,
  };
}

/** A credit operation between two companies (its fields overridable). */
export function statementOperation(
  over: Partial<StatementOperation> & { operation_id: string },
): StatementOperation {
  const party = (name: string, inn: string) => ({
    name,
    inn,
    kpp: "",
    account: "40702810000000000009",
    bank_name: "ПАО «Банк»",
    bank_bik: "044525225",
    bank_corr_account: "30101810400000000225",
  });
  return {
    doc_date: "2026-10-05",
    direction: "credit",
    doc_type: "payment_order",
    doc_number: `№${over.operation_id}`,
    amount: 150_000,
    currency: "RUB",
    purpose: "Оплата по счёту «12» — ёлки",
    payer: party("ООО Лютик", "7707083893"),
    payee: party("ООО Ромашка", "7719617469"),
    uin: null,
    purpose_code: null,
    priority: "5",
    budget: null,
    ...over,
  };
}
