// Counterparties of the synthetic statements: companies, sole proprietors, employees and banks,
// all with checksum-valid INNs and account numbers keyed to their bank's BIK.
import type { Party } from "../../formats/types";
import { completeInn10, completeInn12, withAccountKey } from "../../formats/validators";
import type { AccountHolder } from "../adapter";
import {
  BANKS,
  type BankInfo,
  FEMALE_NAMES,
  LEGAL_FORMS,
  MALE_NAMES,
  MALE_SURNAMES,
  NAME_HEADS,
  NAME_TAILS,
  NAME_WORDS,
  PATRONYMICS,
  TAX_OFFICES,
} from "./dictionaries";
import { hashString, Rng, seedOf } from "./prng";

/**
 * Account number with a valid control key: balance-account prefix (5 digits), currency 810,
 * key, then 11 digits.
 */
function accountAt(rng: Rng, prefix5: string, bik: string): string {
  return withAccountKey(`${prefix5}8100${rng.digits(11)}`, bik);
}

function personName(rng: Rng): string {
  const female = rng.chance(0.45);
  const surname = rng.pick(MALE_SURNAMES);
  const [patronymicM, patronymicF] = rng.pick(PATRONYMICS);
  return female
    ? `${surname}а ${rng.pick(FEMALE_NAMES)} ${patronymicF}`
    : `${surname} ${rng.pick(MALE_NAMES)} ${patronymicM}`;
}

function companyName(rng: Rng): string {
  const form = rng.pick(LEGAL_FORMS);
  const core = rng.chance(0.7) ? `${rng.pick(NAME_HEADS)}${rng.pick(NAME_TAILS)}` : rng.pick(NAME_WORDS);
  const style = rng.next();
  // Most names use «ёлочки»; some systems send straight quotes or the full legal form.
  if (style < 0.8) return `${form} «${core}»`;
  if (style < 0.95) return `${form} "${core}"`;
  return form === "ООО" ? `Общество с ограниченной ответственностью «${core}»` : `${form} «${core}»`;
}

/** A company (10-digit INN, KPP) or, with `soleTrader`, an ИП (12-digit INN, KPP "0"). */
export function newCounterparty(rng: Rng, soleTrader: boolean): Party {
  const bank = rng.pick(BANKS);
  const office = rng.pick(TAX_OFFICES);
  if (soleTrader) {
    return Object.freeze({
      name: `ИП ${personName(rng)}`,
      inn: completeInn12(office + rng.digits(6)),
      kpp: "0",
      account: accountAt(rng, "40802", bank.bik),
      bank_name: bank.name,
      bank_bik: bank.bik,
      bank_corr_account: bank.corr_account,
    });
  }
  const reason = rng.chance(0.9) ? "01" : "43";
  return Object.freeze({
    name: companyName(rng),
    inn: completeInn10(office + rng.digits(5)),
    kpp: `${office}${reason}001`,
    account: accountAt(rng, "40702", bank.bik),
    bank_name: bank.name,
    bank_bik: bank.bik,
    bank_corr_account: bank.corr_account,
  });
}

/** An individual with a current account (salary payee). Individuals have no KPP: "0". */
function newEmployee(rng: Rng): Party {
  const bank = rng.pick(BANKS);
  return Object.freeze({
    name: personName(rng),
    inn: completeInn12(rng.pick(TAX_OFFICES) + rng.digits(6)),
    kpp: "0",
    account: accountAt(rng, "40817", bank.bik),
    bank_name: bank.name,
    bank_bik: bank.bik,
    bank_corr_account: bank.corr_account,
  });
}

/** The statement account's bank; an unknown BIK gets a stand-in bank with a valid correspondent account. */
function bankFor(bik: string): BankInfo {
  const known = BANKS.find((b) => b.bik === bik);
  if (known !== undefined) return known;
  const rng = new Rng(hashString(bik, 0x0b1c));
  return {
    bik,
    name: "АО «Банк Песочница»",
    corr_account: withAccountKey(`30101810000000000${bik.slice(6, 9)}`, bik, { correspondent: true }),
    inn: completeInn10(`77${rng.digits(7)}`),
    kpp: "770101001",
  };
}

/** Everything about one account that does not change from day to day. */
export interface AccountContext {
  seed: number;
  /** Short hex tag that keeps operation ids distinct between accounts. */
  tag: string;
  self: Party;
  bank: BankInfo;
  /** The bank as a party: its fee income account (commissions are paid to it). */
  bankIncome: Party;
  /** The bank as a party: its expense account (interest on balances is paid from it). */
  bankExpense: Party;
  /** The bank's settlement account for card acquiring. */
  bankAcquiring: Party;
  counterparties: readonly Party[];
  employees: readonly Party[];
}

const COUNTERPARTY_POOL = 150;
const EMPLOYEE_POOL = 30;
const CONTEXT_CACHE_LIMIT = 256;
const contextCache = new Map<string, AccountContext>();

/** Without the company's details the account is shown as a demo client with a stable INN. */
function placeholderHolder(seed: number): AccountHolder {
  const inn = completeInn10(`77${String(seed % 10_000_000).padStart(7, "0")}`);
  return { name: "ООО «Демо-клиент»", inn, kpp: `${inn.slice(0, 4)}01001` };
}

function buildContext(accountNumber: string, bik: string, holder: AccountHolder | null): AccountContext {
  const seed = hashString(accountNumber);
  const rng = new Rng(seedOf(seed, 0x5eed, 1));
  const bank = bankFor(bik);
  const owner = holder ?? placeholderHolder(seed);
  const self: Party = Object.freeze({
    name: owner.name,
    inn: owner.inn,
    kpp: owner.kpp,
    account: accountNumber,
    bank_name: bank.name,
    bank_bik: bank.bik,
    bank_corr_account: bank.corr_account,
  });
  const bankParty = (prefix5: string): Party =>
    Object.freeze({
      name: bank.name,
      inn: bank.inn,
      kpp: bank.kpp,
      account: accountAt(rng, prefix5, bank.bik),
      bank_name: bank.name,
      bank_bik: bank.bik,
      bank_corr_account: bank.corr_account,
    });
  const counterparties: Party[] = [];
  for (let i = 0; i < COUNTERPARTY_POOL; i++) counterparties.push(newCounterparty(rng, rng.chance(0.25)));
  const employees: Party[] = [];
  for (let i = 0; i < EMPLOYEE_POOL; i++) employees.push(newEmployee(rng));
  return {
    seed,
    tag: seed.toString(16).padStart(8, "0"),
    self,
    bank,
    bankIncome: bankParty("70601"),
    bankExpense: bankParty("70606"),
    bankAcquiring: bankParty("30233"),
    counterparties,
    employees,
  };
}

/**
 * The context is a pure function of its inputs; the small cache only saves rebuilding the
 * counterparty pool for every day of a statement.
 */
export function accountContext(
  accountNumber: string,
  bik: string,
  holder: AccountHolder | null,
): AccountContext {
  const key =
    holder === null
      ? `${accountNumber}|${bik}`
      : `${accountNumber}|${bik}|${holder.name}|${holder.inn}|${holder.kpp}`;
  const cached = contextCache.get(key);
  if (cached !== undefined) return cached;
  const built = buildContext(accountNumber, bik, holder);
  if (contextCache.size >= CONTEXT_CACHE_LIMIT) {
    const oldest = contextCache.keys().next();
    if (oldest.done !== true) contextCache.delete(oldest.value);
  }
  contextCache.set(key, built);
  return built;
}
