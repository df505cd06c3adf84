// The compact text a model reads in a tool result (content[0].text; decisions §15): a first line
// that says in words what the answer holds and what it does not, then one short line per item.
// structuredContent keeps every field; this is what fits a model's context (a 155-operation
// statement is about a third of its JSON here).
import { ruPlural } from "../core/plural";
import { isoToRu } from "../formats/dates";
import { formatRubles, rublesToKopecks } from "../formats/money";
import type { OperationView } from "./views";

/** Free text on one line: line breaks and runs of spaces become one space. */
export function oneLine(text: string): string {
  return text.replace(/\s+/gu, " ").trim();
}

/** A period in words: "27.10.2026", "27.10–31.10.2026", "25.12.2025–05.01.2026". */
export function ruPeriod(from: string, to: string): string {
  if (from === to) return isoToRu(from);
  if (from.slice(0, 4) === to.slice(0, 4)) return `${isoToRu(from).slice(0, 5)}–${isoToRu(to)}`;
  return `${isoToRu(from)}–${isoToRu(to)}`;
}

/** Rubles of an output (a JSON number with at most two decimals) as "12 500,00", "-1 000,00". */
export function rubles(amount: number): string {
  const k = rublesToKopecks(amount, { signed: true });
  return k === null ? String(amount) : formatRubles(k);
}

/** "+12 500,00" for money in, "−12 500,00" (a minus sign) for money out. */
export function signed(direction: "credit" | "debit", amount: number): string {
  return `${direction === "credit" ? "+" : "−"}${rubles(Math.abs(amount))}`;
}

export function operationsCount(n: number): string {
  return `${n} ${ruPlural(n, "операция", "операции", "операций")}`;
}

/** The header of the operation lines, once per answer. */
export const OPERATION_COLUMNS = "Дата | Сумма | Контрагент | ИНН | № | Назначение";

/**
 * One operation: `YYYY-MM-DD | +12 500,00 | <counterparty> | ИНН <inn> | № <number> | <purpose>`.
 * The counterparty is the side that is not the account: the payer of money in, the payee of
 * money out. A currency other than rubles follows the amount.
 */
export function operationLine(op: OperationView): string {
  const other = op.direction === "credit" ? op.payer : op.payee;
  const currency = op.currency === "RUB" ? "" : ` ${op.currency}`;
  return [
    op.doc_date,
    `${signed(op.direction, op.amount)}${currency}`,
    oneLine(other.name) || "—",
    `ИНН ${other.inn || "—"}`,
    `№ ${oneLine(op.doc_number) || "—"}`,
    oneLine(op.purpose),
  ].join(" | ");
}

/** How a model asks for the next page, in the text it reads (the cursor is in structuredContent too). */
export function nextPageLine(cursor: string | null): string[] {
  return cursor === null ? [] : [`Дальше: тот же вызов с cursor="${cursor}"`];
}
