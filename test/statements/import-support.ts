// Bank statement files for the import tests: built with the writer that svc's own 1C export uses,
// then reshaped the ways real banks' web apps write them.
import iconv from "iconv-lite";
import { generateStatement } from "../../src/banks/sandbox/generator";
import { oneCStatement } from "../../src/formats/onec";
import { DOC_TYPES, type OneCVersion, type StatementOperation } from "../../src/formats/types";
import { BASE, type TestApp } from "../helpers/app";

export interface BankFileOptions {
  version?: OneCVersion;
  opsPerDay?: number;
  /** Line ends: CRLF as the standard has them, or LF as some banks write. */
  lf?: boolean;
  encoding?: "win1251" | "cp866";
  /** Text edits after writing, e.g. dropping optional keys or adding unknown ones. */
  reshape?: (text: string) => string;
}

export interface BankFile {
  bytes: Uint8Array;
  operations: StatementOperation[];
  opening: number;
  closing: number;
}

/** A statement file for `accountNumber` over the period, as a bank would send it. */
export function bankFile(
  accountNumber: string,
  dateFrom: string,
  dateTo: string,
  o: BankFileOptions = {},
): BankFile {
  const generated = generateStatement(
    {
      account_number: accountNumber,
      bik: "044525225",
      ops_per_day: o.opsPerDay ?? 4,
      opening_balance: 50_000_000,
    },
    dateFrom,
    dateTo,
  );
  const operations = [...generated.operations];
  let text = oneCStatement(
    {
      version: o.version ?? "1.03",
      sender: "Интернет-банк",
      receiver: "Бухгалтерский учет",
      created: { date: dateTo, time: "10:00:00" },
      dateFrom,
      dateTo,
      accountNumber,
      docTypes: DOC_TYPES.filter((d) => operations.some((op) => op.doc_type === d)),
      openingBalance: generated.opening_balance,
      totalCredit: generated.total_credit,
      totalDebit: generated.total_debit,
      closingBalance: generated.closing_balance,
    },
    operations,
  );
  if (o.encoding === "cp866") text = text.replace("Кодировка=Windows", "Кодировка=DOS");
  if (o.reshape) text = o.reshape(text);
  if (o.lf) text = text.replaceAll("\r\n", "\n");
  return {
    bytes: new Uint8Array(iconv.encode(text, o.encoding ?? "win1251")),
    operations,
    opening: generated.opening_balance,
    closing: generated.closing_balance,
  };
}

export function importRequest(
  token: string,
  fields: { bank_account_id?: string; external_id?: string; file?: Uint8Array },
): Request {
  const form = new FormData();
  if (fields.bank_account_id !== undefined) form.append("bank_account_id", fields.bank_account_id);
  if (fields.external_id !== undefined) form.append("external_id", fields.external_id);
  if (fields.file !== undefined)
    form.append("file", new Blob([fields.file as Uint8Array<ArrayBuffer>]), "kl_to_1c.txt");
  return new Request(`${BASE}/api/v1/integration/statements/import`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
}

export function importFile(
  t: TestApp,
  token: string,
  accountId: string,
  externalId: string,
  file: Uint8Array,
) {
  return t.app.handle(importRequest(token, { bank_account_id: accountId, external_id: externalId, file }));
}

/** An operation without its id, for comparing what two sources say of the same documents. */
export function withoutId(op: StatementOperation): Omit<StatementOperation, "operation_id"> {
  const { operation_id: _, ...rest } = op;
  return {
    ...rest,
    uin: rest.uin ?? null,
    purpose_code: rest.purpose_code ?? null,
    priority: rest.priority ?? null,
  };
}

export function storedCounts(t: TestApp): {
  statements: number;
  operations: number;
  links: number;
  balances: number;
} {
  const n = (table: string) =>
    t.db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()?.n ?? 0;
  return {
    statements: n("statements"),
    operations: n("operations"),
    links: n("statement_operations"),
    balances: n("balances"),
  };
}
