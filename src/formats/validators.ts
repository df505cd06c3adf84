// Checksums and shapes of Russian bank requisites (see docs/format-1c.md, "Validation rules").

const INN10_WEIGHTS = [2, 4, 10, 3, 5, 9, 4, 6, 8];
const INN12_WEIGHTS_11 = [7, 2, 4, 10, 3, 5, 9, 4, 6, 8];
const INN12_WEIGHTS_12 = [3, 7, 2, 4, 10, 3, 5, 9, 4, 6, 8];
const ACCOUNT_KEY_WEIGHTS = [7, 1, 3];
/** Index of the control key inside a 20-digit account number (its 9th digit). */
const ACCOUNT_KEY_INDEX = 8;

function digitsOf(s: string): number[] {
  return Array.from(s, (c) => c.charCodeAt(0) - 48);
}

function innCheckDigit(digits: string, weights: readonly number[]): number {
  const ds = digitsOf(digits);
  let sum = 0;
  for (let i = 0; i < weights.length; i++) sum += ds[i]! * weights[i]!;
  return (sum % 11) % 10;
}

export function isValidInn(inn: string): boolean {
  if (/^\d{10}$/.test(inn)) {
    return innCheckDigit(inn, INN10_WEIGHTS) === Number(inn[9]);
  }
  if (/^\d{12}$/.test(inn)) {
    return (
      innCheckDigit(inn, INN12_WEIGHTS_11) === Number(inn[10]) &&
      innCheckDigit(inn, INN12_WEIGHTS_12) === Number(inn[11])
    );
  }
  return false;
}

/** Appends the check digit to the first 9 digits of a legal entity's INN. */
export function completeInn10(first9: string): string {
  if (!/^\d{9}$/.test(first9)) throw new RangeError("completeInn10 expects exactly 9 digits");
  return first9 + String(innCheckDigit(first9, INN10_WEIGHTS));
}

/** Appends both check digits to the first 10 digits of an individual's INN. */
export function completeInn12(first10: string): string {
  if (!/^\d{10}$/.test(first10)) throw new RangeError("completeInn12 expects exactly 10 digits");
  const with11 = first10 + String(innCheckDigit(first10, INN12_WEIGHTS_11));
  return with11 + String(innCheckDigit(with11, INN12_WEIGHTS_12));
}

export function isValidBik(bik: string): boolean {
  return /^\d{9}$/.test(bik);
}

/** "0" is what individual entrepreneurs put in the KPP field. */
export function isValidKpp(kpp: string): boolean {
  return kpp === "0" || /^\d{4}[\dA-Z]{2}\d{3}$/.test(kpp);
}

export function isValidAccountNumber(account: string): boolean {
  return /^\d{20}$/.test(account);
}

export interface AccountKeyOptions {
  /** The account is the bank's correspondent account at the central bank. */
  correspondent?: boolean;
}

function accountKeyPrefix(bik: string, correspondent: boolean): string {
  // Correspondent accounts and accounts at cash settlement centres are keyed by the region part
  // of the BIK instead of the bank's own number.
  if (correspondent || bik.slice(6, 8) === "00") return `0${bik.slice(4, 6)}`;
  return bik.slice(6, 9);
}

function accountKeySum(account20: string, bik: string, correspondent: boolean): number {
  const ds = digitsOf(accountKeyPrefix(bik, correspondent) + account20);
  let sum = 0;
  for (let i = 0; i < ds.length; i++) sum += ds[i]! * ACCOUNT_KEY_WEIGHTS[i % 3]!;
  return sum % 10;
}

export function isValidAccountKey(account20: string, bik: string, opts: AccountKeyOptions = {}): boolean {
  if (!isValidAccountNumber(account20) || !isValidBik(bik)) return false;
  return accountKeySum(account20, bik, opts.correspondent === true) === 0;
}

/** Returns the account with its control key (9th digit) set so that isValidAccountKey passes. */
export function withAccountKey(account20: string, bik: string, opts: AccountKeyOptions = {}): string {
  if (!isValidAccountNumber(account20)) throw new RangeError("account number must be 20 digits");
  if (!isValidBik(bik)) throw new RangeError("BIK must be 9 digits");
  const zeroed = `${account20.slice(0, ACCOUNT_KEY_INDEX)}0${account20.slice(ACCOUNT_KEY_INDEX + 1)}`;
  const rest = accountKeySum(zeroed, bik, opts.correspondent === true);
  // The key is digit 12 of the 23 weighted digits, so its weight is 3; 7 is the inverse of 3 mod 10.
  const key = ((10 - rest) * 7) % 10;
  return `${account20.slice(0, ACCOUNT_KEY_INDEX)}${key}${account20.slice(ACCOUNT_KEY_INDEX + 1)}`;
}
