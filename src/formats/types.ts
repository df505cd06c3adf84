// Shared shapes for the statement exports and the 1C exchange codec.
// Money is integer kopecks; dates are ISO "YYYY-MM-DD" strings.

export type OneCVersion = "1.02" | "1.03";

export type OperationDirection = "credit" | "debit";

export type DocType =
  | "payment_order"
  | "payment_request"
  | "collection_order"
  | "payment_warrant"
  | "bank_order"
  | "memorial_order";

export const DOC_TYPES: readonly DocType[] = [
  "payment_order",
  "payment_request",
  "collection_order",
  "payment_warrant",
  "bank_order",
  "memorial_order",
];

export interface Party {
  name: string;
  inn: string;
  kpp: string;
  account: string;
  bank_name: string;
  bank_bik: string;
  bank_corr_account: string;
}

/** A party as flat row columns with a prefix: `PartyColumns<"payee">` is payee_name, payee_inn, … */
export type PartyColumns<Prefix extends string> = { [K in keyof Party as `${Prefix}_${K}`]: string };

/**
 * The budget-payment fields of a document (fields 101 and 104–110 of a payment order: taxes,
 * duties, customs), as the bank gave them; present only on such documents.
 */
export interface BudgetFields {
  /** 101, СтатусСоставителя */
  originator_status?: string;
  /** 104, ПоказательКБК */
  kbk?: string;
  /** 105, ОКАТО (ОКТМО) */
  oktmo?: string;
  /** 106, ПоказательОснования */
  basis?: string;
  /** 107, ПоказательПериода */
  period?: string;
  /** 108, ПоказательНомера */
  number?: string;
  /** 109, ПоказательДаты: YYYY-MM-DD, or the bank's own text ("0") */
  date?: string;
  /** 110, ПоказательТипа */
  type?: string;
}

export interface StatementOperation {
  operation_id: string;
  /** "credit" = money into the statement account, "debit" = money out. */
  direction: OperationDirection;
  doc_type: DocType;
  doc_number: string;
  /** YYYY-MM-DD */
  doc_date: string;
  /** Kopecks, non-negative integer. */
  amount: number;
  currency: string;
  purpose: string;
  payer: Party;
  payee: Party;
  /** Payment identifier (УИН); written as 1C "Код" in version 1.03 only. */
  uin?: string | null;
  /** Purpose code; written as 1C "КодНазПлатежа" in version 1.03 only. */
  purpose_code?: string | null;
  /** Payment priority (Очередность), "1".."5". */
  priority?: string | null;
  /** Budget-payment fields, on tax and customs payments only. */
  budget?: BudgetFields | null;
}

/** Distinct kinds in DOC_TYPES order (a kind it lacks, which no export can write, last). */
export function inDocTypeOrder(kinds: Iterable<string>): string[] {
  const rank = (kind: string) => {
    const i = (DOC_TYPES as readonly string[]).indexOf(kind);
    return i < 0 ? DOC_TYPES.length : i;
  };
  return [...new Set(kinds)].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}
