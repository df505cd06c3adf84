// Accounts and transactions of the fake Tochka bank: their types, a deterministic generator of
// realistic operations, and their rendering into the bank's JSON. Money is integer kopecks here and
// becomes a JSON number of rubles only on the way out (see rubles).
import { MONTHS } from "../../src/banks/sandbox/dictionaries";
import { completeInn10, completeInn12, withAccountKey } from "../../src/formats/validators";

/** ExternalTransationTypeEnum of the document (its spelling). */
export type TransactionTypeCode =
  | "Неопределенное значение"
  | "Платежное поручение"
  | "Платежное требование"
  | "Денежный чек, РКО"
  | "Объявление на взнос наличными, ПКО"
  | "Требование-поручение"
  | "Инкассовое поручение"
  | "Расчетный чек"
  | "Аккредитив"
  | "Мемориальный ордер"
  | "Погашение кредита"
  | "Выдача кредита"
  | "Авизо"
  | "Банковские карты"
  | "Платежный ордер"
  | "Банковский ордер"
  | "Ордер по передаче ценностей"
  | "Программный ордер"
  | "Импортированная запись";

/** The bank serving a party's account. */
export interface FakeAgent {
  bik: string;
  name: string;
  corrAccount: string;
}

export interface FakeParty {
  name: string;
  inn?: string;
  kpp?: string;
  account: string;
  agent: FakeAgent;
}

/** TaxFieldsModel of the document: budget payment requisites (fields 101, 104-109 of the order). */
export interface FakeTaxFields {
  originatorStatus?: string;
  kbk?: string;
  oktmo?: string;
  base?: string;
  documentNumber?: string;
  /** YYYY-MM-DD (the document also allows an integer). */
  documentDate?: string;
  type?: string;
  field107?: string;
}

export interface FakeTransaction {
  /** Defaults to an id derived from the account and the position. */
  transactionId?: string;
  paymentId?: string;
  /** YYYY-MM-DD: the day the operation is reflected on the balance (documentProcessDate). */
  date: string;
  /** Pending operations appear in statements but never count in balances. */
  status: "booked" | "pending";
  /** credit: money in; debit: money out. */
  direction: "credit" | "debit";
  /** Kopecks, positive. */
  amount: number;
  documentNumber: string;
  transactionTypeCode: TransactionTypeCode;
  /** Payment purpose. */
  description: string;
  debtor: FakeParty;
  creditor: FakeParty;
  taxFields?: FakeTaxFields;
}

/**
 * Kopecks to rubles. Dividing an exact integer by 100 gives the double nearest to the decimal value,
 * which is the double the decimal literal parses to, so JSON shows at most 2 decimals (0.1, 1234567.89).
 * Sums must be made in kopecks before this: 0.1 + 0.2 in rubles would show the float drift.
 */
export function rubles(kopecks: number): number {
  return kopecks / 100;
}

const TOCHKA_AGENT: FakeAgent = {
  bik: "044525104",
  name: "ООО «Банк Точка»",
  corrAccount: "30101810745374525104",
};

const BANKS: readonly FakeAgent[] = [
  TOCHKA_AGENT,
  { bik: "044525225", name: "ПАО СБЕРБАНК", corrAccount: "30101810400000000225" },
  { bik: "044525593", name: "АО «АЛЬФА-БАНК»", corrAccount: "30101810200000000593" },
  { bik: "044525187", name: "Банк ВТБ (ПАО)", corrAccount: "30101810700000000187" },
  { bik: "044525974", name: "АО «ТБанк»", corrAccount: "30101810145250000974" },
];

/** The tax service's single treasury account (ЕНП), as on real tax payment orders. */
const TREASURY: FakeParty = {
  name: "Казначейство России (ФНС России)",
  inn: "7727406020",
  kpp: "770801001",
  account: "03100643000000018500",
  agent: {
    bik: "017003983",
    name: "ОКЦ № 7 ГУ Банка России по ЦФО//УФК по г. Москве, г. Москва",
    corrAccount: "40102810445370000059",
  },
};

const COMPANY_WORDS = [
  "Ромашка",
  "Вектор",
  "Гранит",
  "Северный ветер",
  "Техностиль",
  "Альтаир",
  "Полюс",
  "Орион",
];
const SURNAMES = ["Иванов", "Смирнов", "Кузнецов", "Попов", "Васильев", "Соколов", "Морозов", "Волков"];
const NAMES = ["Алексей Петрович", "Дмитрий Сергеевич", "Игорь Николаевич", "Павел Андреевич"];

/**
 * Amounts that expose float arithmetic: 0.10 + 0.20 is not 0.30 in doubles, and 1234567.89 has no
 * exact binary form. Every 10th generated operation takes one of them.
 */
const TRICKY_KOPECKS = [10, 20, 123_456_789, 1, 30, 99_999_999, 70];

/** mulberry32: small, seeded, the same on every engine. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function digits(next: () => number, n: number): string {
  let s = "";
  for (let i = 0; i < n; i++) s += String(Math.floor(next() * 10));
  return s;
}

function pick<T>(next: () => number, items: readonly T[]): T {
  return items[Math.floor(next() * items.length)] as T;
}

const DAY_MS = 86_400_000;

function dayNumber(date: string): number {
  return Math.floor(Date.parse(`${date}T00:00:00Z`) / DAY_MS);
}

function dateOf(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

function ruDate(date: string): string {
  return `${date.slice(8, 10)}.${date.slice(5, 7)}.${date.slice(0, 4)}`;
}

export interface GenerateOptions {
  /** "{20-digit number}/{BIK}" of the account the operations belong to. */
  accountId: string;
  /** The account holder, on the other side of every operation. */
  holder?: { name: string; inn: string; kpp?: string };
  /** First and last day of the operations, YYYY-MM-DD. Defaults: 2026-01-01 and 2026-03-31. */
  from?: string;
  to?: string;
  seed?: number;
  /** Share of pending operations. Default 0.03. */
  pendingShare?: number;
}

/** `count` operations spread over the period, sorted by day; the same options give the same list. */
export function generateTransactions(count: number, options: GenerateOptions): FakeTransaction[] {
  const [number, bik] = options.accountId.split("/") as [string, string];
  const next = rng(options.seed ?? 1);
  const first = dayNumber(options.from ?? "2026-01-01");
  const last = dayNumber(options.to ?? "2026-03-31");
  const pendingShare = options.pendingShare ?? 0.03;
  const holderAgent = BANKS.find((b) => b.bik === bik) ?? { ...TOCHKA_AGENT, bik };
  const holder: FakeParty = {
    name: options.holder?.name ?? "ООО «Тестовая компания»",
    inn: options.holder?.inn ?? completeInn10("770123456"),
    kpp: options.holder?.kpp ?? "770101001",
    account: number,
    agent: holderAgent,
  };

  const company = (): FakeParty => {
    const agent = pick(next, BANKS);
    const office = pick(next, ["7701", "7705", "7810", "5024", "6658"]);
    return {
      name: `ООО «${pick(next, COMPANY_WORDS)}»`,
      inn: completeInn10(office + digits(next, 5)),
      kpp: `${office}01001`,
      account: withAccountKey(`407028100${digits(next, 11)}`, agent.bik),
      agent,
    };
  };
  const person = (): FakeParty => {
    const agent = pick(next, BANKS);
    return {
      name: `${pick(next, SURNAMES)} ${pick(next, NAMES)}`,
      inn: completeInn12(`7701${digits(next, 6)}`),
      account: withAccountKey(`408178100${digits(next, 11)}`, agent.bik),
      agent,
    };
  };
  const bank: FakeParty = {
    name: holderAgent.name,
    inn: "9721194461",
    kpp: "997950001",
    account: withAccountKey("70601810000000000001", holderAgent.bik),
    agent: holderAgent,
  };

  const days = Array.from({ length: count }, () => first + Math.floor(next() * (last - first + 1))).sort(
    (a, b) => a - b,
  );
  let outgoing = 1000;
  const out: FakeTransaction[] = [];
  for (let i = 0; i < count; i++) {
    const date = dateOf(days[i] as number);
    const roll = next();
    let amount =
      i % 10 === 9
        ? (TRICKY_KOPECKS[Math.floor(i / 10) % TRICKY_KOPECKS.length] as number)
        : 100 + Math.floor(next() * 50_000_000);
    const status = next() < pendingShare ? "pending" : "booked";
    const common = {
      transactionId: `${number}-${i + 1}`,
      paymentId: `p-${options.seed ?? 1}-${i + 1}`,
      date,
      status,
    } as const;
    if (roll < 0.45) {
      const payer = company();
      const invoice = 1 + Math.floor(next() * 900);
      out.push({
        ...common,
        direction: "credit",
        amount,
        documentNumber: String(1 + Math.floor(next() * 99_999)),
        transactionTypeCode: "Платежное поручение",
        description: `Оплата по счету № ${invoice} от ${ruDate(date)}. В том числе НДС 20%`,
        debtor: payer,
        creditor: holder,
      });
    } else if (roll < 0.75) {
      out.push({
        ...common,
        direction: "debit",
        amount,
        documentNumber: String(outgoing++),
        transactionTypeCode: "Платежное поручение",
        description: `Оплата по договору № ${10 + Math.floor(next() * 90)}/${date.slice(0, 4)} за услуги. НДС не облагается`,
        debtor: holder,
        creditor: company(),
      });
    } else if (roll < 0.87) {
      const month = MONTHS[Number(date.slice(5, 7)) - 1] as string;
      out.push({
        ...common,
        direction: "debit",
        amount,
        documentNumber: String(outgoing++),
        transactionTypeCode: "Платежное поручение",
        description: `Перечисление заработной платы за ${month} ${date.slice(0, 4)} г. НДФЛ удержан полностью`,
        debtor: holder,
        creditor: person(),
      });
    } else if (roll < 0.95) {
      amount = 100 + (amount % 500_000);
      out.push({
        ...common,
        direction: "debit",
        amount,
        documentNumber: String(1 + Math.floor(next() * 9_999)),
        transactionTypeCode: "Мемориальный ордер",
        description: `Комиссия за ведение счета за ${ruDate(date).slice(3)}`,
        debtor: holder,
        creditor: bank,
      });
    } else {
      out.push({
        ...common,
        direction: "debit",
        amount,
        documentNumber: String(outgoing++),
        transactionTypeCode: "Платежное поручение",
        description: "Единый налоговый платеж",
        debtor: holder,
        creditor: TREASURY,
        taxFields: {
          originatorStatus: "01",
          kbk: "18201061201010000510",
          oktmo: "0",
          base: "0",
          documentNumber: "0",
          documentDate: date,
          field107: "0",
        },
      });
    }
  }
  return out;
}

function party(p: FakeParty) {
  return {
    name: p.name,
    ...(p.inn === undefined ? {} : { inn: p.inn }),
    ...(p.kpp === undefined ? {} : { kpp: p.kpp }),
  };
}

function cashAccount(p: FakeParty) {
  return { schemeName: "RU.CBR.PAN", identification: p.account };
}

function agent(a: FakeAgent) {
  return {
    schemeName: "RU.CBR.BIK",
    identification: a.bik,
    accountIdentification: a.corrAccount,
    name: a.name,
  };
}

/** A TransactionModel of the document. */
export function renderTransaction(tx: FakeTransaction, currency: string): Record<string, unknown> {
  return {
    ...(tx.transactionId === undefined ? {} : { transactionId: tx.transactionId }),
    ...(tx.paymentId === undefined ? {} : { paymentId: tx.paymentId }),
    creditDebitIndicator: tx.direction === "credit" ? "Credit" : "Debit",
    status: tx.status === "booked" ? "Booked" : "Pending",
    documentNumber: tx.documentNumber,
    transactionTypeCode: tx.transactionTypeCode,
    documentProcessDate: tx.date,
    description: tx.description,
    // The fake keeps only rouble accounts, so the amount in roubles equals the amount.
    Amount: { amount: rubles(tx.amount), amountNat: rubles(tx.amount), currency },
    DebtorParty: party(tx.debtor),
    DebtorAccount: cashAccount(tx.debtor),
    DebtorAgent: agent(tx.debtor.agent),
    CreditorParty: party(tx.creditor),
    CreditorAccount: cashAccount(tx.creditor),
    CreditorAgent: agent(tx.creditor.agent),
    ...(tx.taxFields === undefined ? {} : { TaxFields: tx.taxFields }),
  };
}

/** Booked credits minus booked debits, in kopecks; pending operations do not move the balance. */
export function bookedNet(transactions: readonly FakeTransaction[]): number {
  let sum = 0;
  for (const tx of transactions) {
    if (tx.status !== "booked") continue;
    sum += tx.direction === "credit" ? tx.amount : -tx.amount;
  }
  return sum;
}
