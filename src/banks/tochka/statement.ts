// A Tochka statement (its JSON document) as svc's operations and balances. Amounts arrive as JSON
// numbers; each becomes exact kopecks through its shortest decimal text (1234.56, never
// 123455.99999), and anything with more than two decimals is refused, not rounded. The totals are
// checked against the bank's balances before anything is stored.
import { createHash } from "node:crypto";
import { addKopecks, closingKopecks, formatKopecks, rublesToKopecks } from "../../formats/money";
import type { BudgetFields, DocType, Party, StatementOperation } from "../../formats/types";
import type { ReadyStatement, StatementPollResult } from "../adapter";

export interface TochkaParty {
  inn?: string;
  name?: string;
  kpp?: string;
}
export interface TochkaCashAccount {
  schemeName?: string;
  identification?: string;
}
export interface TochkaAgent {
  schemeName?: string;
  identification?: string;
  accountIdentification?: string;
  name?: string;
}

export interface TochkaTransaction {
  transactionId?: string;
  paymentId?: string;
  creditDebitIndicator: "Credit" | "Debit";
  status: "Booked" | "Pending";
  documentNumber?: string;
  transactionTypeCode?: string;
  documentProcessDate?: string;
  description?: string;
  Amount: { amount: number; amountNat?: number; currency: string };
  DebtorParty?: TochkaParty;
  DebtorAccount?: TochkaCashAccount;
  DebtorAgent?: TochkaAgent;
  CreditorParty?: TochkaParty;
  CreditorAccount?: TochkaCashAccount;
  CreditorAgent?: TochkaAgent;
  TaxFields?: Record<string, unknown>;
}

export interface TochkaStatement {
  accountId: string;
  statementId?: string;
  status: "Created" | "Processing" | "Error" | "Ready";
  startDateTime: string;
  endDateTime: string;
  startDateBalance?: number;
  endDateBalance?: number;
  Transaction?: TochkaTransaction[];
}

/** Tochka's document kinds (transactionTypeCode) as 1C's; what 1C has no kind for is a bank order. */
const DOC_TYPE_BY_KIND: Record<string, DocType> = {
  "Платежное поручение": "payment_order",
  "Платежное требование": "payment_request",
  "Требование-поручение": "payment_request",
  "Инкассовое поручение": "collection_order",
  "Платежный ордер": "payment_warrant",
  "Банковский ордер": "bank_order",
  "Мемориальный ордер": "memorial_order",
};

export class StatementRejected extends Error {
  constructor(
    readonly code: "statement_totals_mismatch" | "statement_incomplete" | "bank_error",
    message: string,
  ) {
    super(message);
    this.name = "StatementRejected";
  }
}

function party(
  p: TochkaParty | undefined,
  account: TochkaCashAccount | undefined,
  agent: TochkaAgent | undefined,
): Party {
  return {
    name: p?.name?.trim() ?? "",
    inn: p?.inn?.trim() ?? "",
    kpp: p?.kpp?.trim() ?? "",
    account: account?.identification?.trim() ?? "",
    bank_name: agent?.name?.trim() ?? "",
    bank_bik: agent?.identification?.trim() ?? "",
    bank_corr_account: agent?.accountIdentification?.trim() ?? "",
  };
}

function hash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 32);
}

/**
 * The bank's transaction id is the operation's identity (the same transaction in overlapping
 * statements is one operation); without one, its content and its place among equal ones.
 */
function operationIdOf(accountId: string, t: TochkaTransaction, seen: Map<string, number>): string {
  if (t.transactionId) return `tochka-${hash(`${accountId}#${t.transactionId}`)}`;
  const key = JSON.stringify([
    accountId,
    t.creditDebitIndicator,
    t.documentProcessDate,
    t.documentNumber,
    t.Amount.amount,
    t.DebtorAccount?.identification,
    t.CreditorAccount?.identification,
    t.description,
  ]);
  const n = (seen.get(key) ?? 0) + 1;
  seen.set(key, n);
  return `tochka-${hash(`${key}#${n}`)}`;
}

function toOperation(
  accountId: string,
  t: TochkaTransaction,
  fallbackDate: string,
  seen: Map<string, number>,
): StatementOperation {
  const amount = rublesToKopecks(t.Amount?.amount);
  if (amount === null) {
    throw new StatementRejected(
      "bank_error",
      `Сумма операции ${t.documentNumber ?? ""} не выражается в копейках: ${String(t.Amount?.amount)}`,
    );
  }
  return {
    operation_id: operationIdOf(accountId, t, seen),
    direction: t.creditDebitIndicator === "Credit" ? "credit" : "debit",
    doc_type: DOC_TYPE_BY_KIND[t.transactionTypeCode ?? ""] ?? "bank_order",
    doc_number: t.documentNumber?.trim() ?? "",
    doc_date: t.documentProcessDate ?? fallbackDate,
    amount,
    currency: t.Amount.currency,
    purpose: t.description ?? "",
    payer: party(t.DebtorParty, t.DebtorAccount, t.DebtorAgent),
    payee: party(t.CreditorParty, t.CreditorAccount, t.CreditorAgent),
    budget: budgetFields(t.TaxFields),
  };
}

/** The bank's TaxFields as the document's budget-payment fields; null when it gave none. */
function budgetFields(tax: Record<string, unknown> | undefined): BudgetFields | null {
  if (!tax) return null;
  const text = (v: unknown) =>
    typeof v === "string" && v.trim() !== "" ? v.trim() : typeof v === "number" ? String(v) : undefined;
  const fields: BudgetFields = {
    originator_status: text(tax.originatorStatus),
    kbk: text(tax.kbk),
    oktmo: text(tax.oktmo),
    basis: text(tax.base),
    period: text(tax.field107),
    number: text(tax.documentNumber),
    date: text(tax.documentDate),
    type: text(tax.type),
  };
  const present = Object.fromEntries(
    Object.entries(fields).filter(([, v]) => v !== undefined),
  ) as BudgetFields;
  return Object.keys(present).length > 0 ? present : null;
}

/**
 * A Ready statement (all its pages) as the adapter's result: booked transactions only, totals
 * computed and checked against the bank's balances — a statement that does not add up is refused
 * with the figures, never stored.
 */
export function readyStatement(accountId: string, pages: TochkaStatement[]): ReadyStatement {
  const first = pages[0]!;
  const balance = (value: number | undefined, which: string): number => {
    if (value === undefined)
      throw new StatementRejected("bank_error", `В выписке банка нет остатка на ${which}`);
    const k = rublesToKopecks(value, { signed: true });
    if (k === null) {
      throw new StatementRejected(
        "bank_error",
        `Остаток на ${which} не выражается в копейках: ${String(value)}`,
      );
    }
    return k;
  };
  const opening = balance(first.startDateBalance, "начало периода");
  const closing = balance(pages[pages.length - 1]!.endDateBalance ?? first.endDateBalance, "конец периода");
  const seen = new Map<string, number>();
  const operations: StatementOperation[] = [];
  let credit = 0;
  let debit = 0;
  for (const page of pages) {
    for (const t of page.Transaction ?? []) {
      if (t.status !== "Booked") continue;
      const op = toOperation(accountId, t, first.endDateTime, seen);
      const sum = addKopecks(op.direction === "credit" ? credit : debit, op.amount);
      if (sum === null)
        throw new StatementRejected("bank_error", "Обороты выписки банка не выражаются в копейках");
      if (op.direction === "credit") credit = sum;
      else debit = sum;
      operations.push(op);
    }
  }
  const computed = closingKopecks(opening, credit, debit);
  if (computed === null) {
    throw new StatementRejected("bank_error", "Остаток выписки банка не выражается в копейках");
  }
  if (computed !== closing) {
    throw new StatementRejected(
      "statement_totals_mismatch",
      `Выписка банка не сходится: остаток на начало ${formatKopecks(opening)} + поступления ${formatKopecks(credit)} − списания ${formatKopecks(debit)} = ${formatKopecks(computed)}, а банк указал остаток на конец ${formatKopecks(closing)}`,
    );
  }
  return {
    status: "ready",
    opening_balance: opening,
    closing_balance: closing,
    total_credit: credit,
    total_debit: debit,
    operations,
  };
}

export function rejectedResult(e: StatementRejected): StatementPollResult {
  return { status: "failed", error: { code: e.code, message: e.message } };
}
