// What each synthetic operation is: document type, counterparty, number and purpose text.
// The choice depends on the direction and the amount, which are fixed before this step.
import type { DocType, Party } from "../../formats/types";
import { dayToRu } from "./calendar";
import { GOODS, INSTRUCTION_LIKE_PURPOSES, MONTHS, NAME_WORDS, UTILITIES } from "./dictionaries";
import { type AccountContext, newCounterparty } from "./parties";
import type { Rng } from "./prng";

/** Facts about the day that purposes refer to (dates of invoices, the month being paid for). */
export interface DayFacts {
  day: number;
  year: number;
  month: number;
  dayOfMonth: number;
  /** Number of the company's own next payment order, before adding the operation index. */
  docBase: number;
  vatRate: number;
  /** dd.MM.yyyy of this day and the days before it, index = days back. */
  recent: readonly string[];
}

export interface Draft {
  doc_type: DocType;
  doc_number: string;
  purpose: string;
  counterparty: Party;
  priority: string | null;
}

export const RECENT_DAYS = 45;

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** Kopecks as purposes write them: "1200-00". */
function rubles(kopecks: number): string {
  return `${Math.floor(kopecks / 100)}-${pad2(kopecks % 100)}`;
}

/** VAT included in a gross amount, rounded to the kopeck. */
function vatOf(amount: number, rate: number): number {
  return Math.round((amount * rate) / (100 + rate));
}

function vatClause(rng: Rng, f: DayFacts, amount: number): string {
  const t = rng.next();
  if (t < 0.6) return `В т.ч. НДС (${f.vatRate}%) ${rubles(vatOf(amount, f.vatRate))}`;
  if (t < 0.9) return "НДС не облагается";
  return "Без налога (НДС)";
}

function sumWithVat(f: DayFacts, amount: number): string {
  return `Сумма ${rubles(amount)}, в т.ч. НДС (${f.vatRate}%) ${rubles(vatOf(amount, f.vatRate))}`;
}

function recentDate(rng: Rng, f: DayFacts, maxBack: number): string {
  return f.recent[rng.int(maxBack + 1)]!;
}

/** Contracts are older than invoices: up to two years back. */
function contractDate(rng: Rng, f: DayFacts): string {
  return dayToRu(f.day - rng.range(20, 730));
}

function contractNo(rng: Rng): string {
  return `${rng.range(1, 350)}${rng.pick(["", "/П", "-ПС", "/24", "-У", "/ТО"])}`;
}

function monthBefore(f: DayFacts): string {
  return f.month === 1 ? `${MONTHS[11]} ${f.year - 1}` : `${MONTHS[f.month - 2]} ${f.year}`;
}

function thisMonth(f: DayFacts): string {
  return `${MONTHS[f.month - 1]} ${f.year}`;
}

function counterpartyFor(rng: Rng, ctx: AccountContext): Party {
  // Mostly regular partners, sometimes a one-off payer or supplier.
  return rng.chance(0.12) ? newCounterparty(rng, rng.chance(0.25)) : rng.pick(ctx.counterparties);
}

function theirNumber(rng: Rng): string {
  return String(rng.range(1, 9999));
}

function bankNumber(rng: Rng): string {
  return String(rng.range(100000, 999999));
}

/** Goods and services in the usual wordings, a few with quotes, commas and a line break. */
function tradePurpose(rng: Rng, f: DayFacts, amount: number, incoming: boolean): string {
  const goods = rng.pick(GOODS);
  const inv = rng.range(1, 2999);
  const t = rng.next();
  if (t < 0.3)
    return `Оплата по счету № ${inv} от ${recentDate(rng, f, 20)} за ${goods}. ${sumWithVat(f, amount)}`;
  if (t < 0.5) {
    return `Оплата по договору № ${contractNo(rng)} от ${contractDate(rng, f)} за ${goods}. ${vatClause(rng, f, amount)}`;
  }
  if (t < 0.62)
    return `Оплата по УПД № ${inv} от ${recentDate(rng, f, 30)} за ${goods}. ${vatClause(rng, f, amount)}`;
  if (t < 0.72) {
    return incoming
      ? `Оплата за ${goods} по счету № ${inv} от ${recentDate(rng, f, 10)}. ${vatClause(rng, f, amount)}`
      : `Арендная плата за ${thisMonth(f)} по договору аренды № ${contractNo(rng)}. ${vatClause(rng, f, amount)}`;
  }
  if (t < 0.82)
    return `Предоплата по счету № ${inv} от ${recentDate(rng, f, 5)} за ${goods}. ${vatClause(rng, f, amount)}`;
  if (t < 0.9) {
    return `Оплата по договору "${rng.pick(NAME_WORDS)}" № ${contractNo(rng)} от ${contractDate(rng, f)} за ${goods}, счет № ${inv}. ${vatClause(rng, f, amount)}`;
  }
  if (t < 0.95)
    return `Оплата по счету № ${inv} от ${recentDate(rng, f, 20)} за ${goods}\n${vatClause(rng, f, amount)}`;
  return `Оплата по актам сверки, счета № ${inv}, ${inv + rng.range(1, 40)} от ${recentDate(rng, f, 30)}. ${vatClause(rng, f, amount)}`;
}

/** Comma, double quotes and a line break in one purpose: what exports must escape. */
export function awkwardDraft(
  rng: Rng,
  f: DayFacts,
  ctx: AccountContext,
  incoming: boolean,
  index: number,
): Draft {
  return {
    doc_type: "payment_order",
    doc_number: incoming ? theirNumber(rng) : String(f.docBase + index),
    purpose: `Оплата по договору № ${contractNo(rng)} "${rng.pick(NAME_WORDS)}", счет № ${rng.range(1, 2999)} от ${recentDate(rng, f, 20)}\nНДС не облагается`,
    counterparty: counterpartyFor(rng, ctx),
    priority: "5",
  };
}

export function instructionLikeDraft(
  rng: Rng,
  f: DayFacts,
  ctx: AccountContext,
  incoming: boolean,
  index: number,
): Draft {
  return {
    doc_type: "payment_order",
    doc_number: incoming ? theirNumber(rng) : String(f.docBase + index),
    purpose: rng.pick(INSTRUCTION_LIKE_PURPOSES),
    counterparty: counterpartyFor(rng, ctx),
    priority: "5",
  };
}

export function debitDraft(rng: Rng, f: DayFacts, ctx: AccountContext, amount: number, index: number): Draft {
  const ownNumber = String(f.docBase + index);
  if (amount <= 300_000 && rng.chance(0.55)) {
    const t = rng.next();
    const purpose =
      t < 0.4
        ? `Комиссия за ведение счета за ${monthBefore(f)}. НДС не облагается`
        : t < 0.8
          ? `Комиссия за перевод по п/п № ${rng.range(1, 9999)} от ${recentDate(rng, f, 3)}. НДС не облагается`
          : `Плата за обслуживание в системе «Клиент-Банк» за ${thisMonth(f)}. НДС не облагается`;
    return {
      doc_type: "bank_order",
      doc_number: bankNumber(rng),
      purpose,
      counterparty: ctx.bankIncome,
      priority: null,
    };
  }
  if (amount >= 1_500_000 && amount <= 40_000_000 && rng.chance(0.12)) {
    const purpose =
      f.dayOfMonth <= 15
        ? `Заработная плата за ${monthBefore(f)}. НДС не облагается`
        : `Аванс по заработной плате за ${thisMonth(f)}. НДС не облагается`;
    return {
      doc_type: "payment_order",
      doc_number: ownNumber,
      purpose,
      counterparty: rng.pick(ctx.employees),
      priority: "3",
    };
  }
  const t = rng.next();
  if (t < 0.05) {
    return {
      doc_type: "payment_request",
      doc_number: theirNumber(rng),
      purpose: `Оплата за ${rng.pick(UTILITIES)} за ${monthBefore(f)} по договору № ${contractNo(rng)}. ${sumWithVat(f, amount)}`,
      counterparty: counterpartyFor(rng, ctx),
      priority: "5",
    };
  }
  if (t < 0.055) {
    return {
      doc_type: "collection_order",
      doc_number: theirNumber(rng),
      purpose: `Взыскание по исполнительному листу ФС № 0${rng.digits(8)} от ${contractDate(rng, f)} по делу № А40-${rng.range(1000, 299999)}/${f.year - 1}. НДС не облагается`,
      counterparty: counterpartyFor(rng, ctx),
      priority: "4",
    };
  }
  if (t < 0.095) {
    return {
      doc_type: "payment_order",
      doc_number: ownNumber,
      purpose: `Возврат займа по договору № З-${rng.range(1, 99)} от ${contractDate(rng, f)}. НДС не облагается`,
      counterparty: counterpartyFor(rng, ctx),
      priority: "5",
    };
  }
  return {
    doc_type: "payment_order",
    doc_number: ownNumber,
    purpose: tradePurpose(rng, f, amount, false),
    counterparty: counterpartyFor(rng, ctx),
    priority: "5",
  };
}

export function creditDraft(rng: Rng, f: DayFacts, ctx: AccountContext, amount: number): Draft {
  if (amount <= 500_000 && rng.chance(0.3)) {
    return {
      doc_type: "memorial_order",
      doc_number: bankNumber(rng),
      purpose: `Выплата процентов на остаток по счету за ${monthBefore(f)}. НДС не облагается`,
      counterparty: ctx.bankExpense,
      priority: null,
    };
  }
  const t = rng.next();
  if (t < 0.05) {
    const fee = Math.round((amount * 18) / 1000);
    return {
      doc_type: "bank_order",
      doc_number: bankNumber(rng),
      purpose: `Зачисление средств по операциям эквайринга. Мерчант ${rng.digits(7)}. Дата реестра ${recentDate(rng, f, 2)}. Комиссия ${rubles(fee)}. Возврат покупки 0-00. НДС не облагается`,
      counterparty: ctx.bankAcquiring,
      priority: null,
    };
  }
  if (t < 0.08) {
    return {
      doc_type: "payment_order",
      doc_number: theirNumber(rng),
      purpose: `Предоставление займа по договору № З-${rng.range(1, 99)}/${f.year} от ${recentDate(rng, f, 10)}. НДС не облагается`,
      counterparty: counterpartyFor(rng, ctx),
      priority: "5",
    };
  }
  if (t < 0.12) {
    return {
      doc_type: "payment_order",
      doc_number: theirNumber(rng),
      purpose: `Возврат излишне перечисленных денежных средств по п/п № ${rng.range(1, 9999)} от ${recentDate(rng, f, 40)}. НДС не облагается`,
      counterparty: counterpartyFor(rng, ctx),
      priority: "5",
    };
  }
  return {
    doc_type: "payment_order",
    doc_number: theirNumber(rng),
    purpose: tradePurpose(rng, f, amount, true),
    counterparty: counterpartyFor(rng, ctx),
    priority: "5",
  };
}
