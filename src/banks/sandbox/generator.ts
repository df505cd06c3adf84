// Deterministic synthetic bank data for the sandbox banks.
//
// Everything is a pure function of the account (number, BIK, ops_per_day, opening_balance,
// optional holder) and the date: the same inputs give the same operations, ids, amounts and
// balances on any machine and across restarts. Randomness comes from splitmix32 seeded by a hash
// of the account number and the day number; only integer and exact IEEE arithmetic is used.
//
// Balance model. `opening_balance` is the balance at the start of SANDBOX_ANCHOR_DATE
// (2020-01-01). Days before the anchor have no activity, so any earlier date also opens with
// `opening_balance`. Each later day first draws its net flow from one value of its own seed
// (cheap), with a slight upward drift; a negative draw that would take the balance below zero is
// mirrored into a positive one, so a balance that starts at or above zero never goes negative.
// The balance at a date is the anchor balance plus the nets of the days in between: a few
// thousand cheap steps, not the operations of those days.
//
// The day's operations are then drawn to sum exactly to that net: every operation but the last
// gets a direction (steered toward the running target, so the remainder stays ordinary) and an
// amount; the last absorbs the remainder and takes its sign as its direction. Amounts are
// always positive.
import type { StatementOperation } from "../../formats/types";
import type { AccountHolder } from "../adapter";
import { dayToCivil, dayToIso, dayToRu, isoToDay } from "./calendar";
import type { AccountContext } from "./parties";
import { accountContext } from "./parties";
import { Rng, seedOf } from "./prng";
import {
  awkwardDraft,
  creditDraft,
  type DayFacts,
  type Draft,
  debitDraft,
  instructionLikeDraft,
  RECENT_DAYS,
} from "./purposes";

const SANDBOX_ANCHOR_DATE = "2020-01-01";
const SANDBOX_MIN_OPS_PER_DAY = 1;
const SANDBOX_MAX_OPS_PER_DAY = 5000;
export const SANDBOX_DEFAULT_OPS_PER_DAY = 5;
/** 1,000,000.00 RUB. */
export const SANDBOX_DEFAULT_OPENING_BALANCE = 100_000_000;

const ANCHOR_DAY = isoToDay(SANDBOX_ANCHOR_DATE);

/** Independent random streams per day, so the net and the amounts can be drawn without the rest. */
const STREAM_NET = 1;
const STREAM_AMOUNTS = 2;
const STREAM_DETAILS = 3;

/** Amount buckets in kopecks, [low, high, weight]: mostly everyday sums, a thin tail of large ones. */
const AMOUNT_BUCKETS: readonly (readonly [number, number, number])[] = [
  [10_000, 50_000, 120],
  [50_000, 200_000, 150],
  [200_000, 1_000_000, 200],
  [1_000_000, 5_000_000, 250],
  [5_000_000, 15_000_000, 160],
  [15_000_000, 50_000_000, 100],
  [50_000_000, 200_000_000, 17],
  [200_000_000, 1_000_000_000, 3],
];
const BUCKET_TOTAL = AMOUNT_BUCKETS.reduce((s, b) => s + b[2], 0);

/** Roughly the mean amount; the daily net scales with it and with the square root of the volume. */
const TYPICAL_AMOUNT = 10_000_000;
/** E[2u − 0.95] = +0.05: balances drift slowly upward. */
const NET_OFFSET = 0.95;
/** Probability that the next operation is a credit when the running sum is below / above target. */
const STEER_TOWARD = 0.68;

export interface SandboxAccountSpec {
  account_number: string;
  bik: string;
  ops_per_day: number;
  /** Kopecks at the start of SANDBOX_ANCHOR_DATE. */
  opening_balance: number;
  /**
   * The statement account's owner as it should appear in payer/payee. When absent a stable
   * placeholder ("ООО «Демо-клиент»", an INN derived from the account number) is used.
   */
  holder?: AccountHolder | null;
}

export interface GeneratedStatement {
  opening_balance: number;
  closing_balance: number;
  total_credit: number;
  total_debit: number;
  operations_count: number;
  /**
   * Re-iterable; each iteration generates day by day, holding one day's operations at a time.
   * Party objects are shared between operations and frozen: treat operations as read-only.
   */
  operations: Iterable<StatementOperation>;
}

function checkSpec(spec: SandboxAccountSpec): void {
  if (!/^\d{20}$/.test(spec.account_number)) throw new RangeError("account_number must be 20 digits");
  if (!/^\d{9}$/.test(spec.bik)) throw new RangeError("bik must be 9 digits");
  const n = spec.ops_per_day;
  if (!Number.isInteger(n) || n < SANDBOX_MIN_OPS_PER_DAY || n > SANDBOX_MAX_OPS_PER_DAY) {
    throw new RangeError(
      `ops_per_day must be an integer from ${SANDBOX_MIN_OPS_PER_DAY} to ${SANDBOX_MAX_OPS_PER_DAY}`,
    );
  }
  if (!Number.isSafeInteger(spec.opening_balance)) {
    throw new RangeError("opening_balance must be integer kopecks");
  }
}

function contextOf(spec: SandboxAccountSpec): AccountContext {
  return accountContext(spec.account_number, spec.bik, spec.holder ?? null);
}

function netOf(seed: number, day: number, n: number, balanceAtStart: number): number {
  if (day < ANCHOR_DAY) return 0;
  const u = new Rng(seedOf(seed, day, STREAM_NET)).next();
  const scale = Math.round(TYPICAL_AMOUNT * Math.sqrt(n));
  let net = Math.floor(scale * (2 * u - NET_OFFSET));
  // A zero net cannot be split into positive amounts when the day has a single operation.
  if (net === 0) net = 100;
  return balanceAtStart + net < 0 ? -net : net;
}

function balanceAtDay(seed: number, n: number, openingBalance: number, day: number): number {
  let balance = openingBalance;
  for (let d = ANCHOR_DAY; d < day; d++) balance += netOf(seed, d, n, balance);
  return balance;
}

function drawAmount(rng: Rng): number {
  let w = rng.next() * BUCKET_TOTAL;
  let bucket = AMOUNT_BUCKETS[0]!;
  for (const b of AMOUNT_BUCKETS) {
    bucket = b;
    if (w < b[2]) break;
    w -= b[2];
  }
  const [lo, hi] = bucket;
  const amount = lo + Math.floor(rng.next() * (hi - lo));
  // Many payments are in whole rubles.
  return rng.next() < 0.45 ? amount - (amount % 100) : amount;
}

interface DayTotals {
  credit: number;
  debit: number;
}

/**
 * Signed amounts of the day's operations (credit > 0, debit < 0) summing exactly to `net`.
 * With `out` null only the totals are computed, which is all statement totals need.
 */
function planDay(seed: number, day: number, n: number, net: number, out: Float64Array | null): DayTotals {
  const rng = new Rng(seedOf(seed, day, STREAM_AMOUNTS));
  let sum = 0;
  let first = 0;
  let credit = 0;
  let debit = 0;
  for (let i = 0; i < n - 1; i++) {
    const target = (net * (i + 1)) / n;
    const isCredit = rng.next() < (sum < target ? STEER_TOWARD : 1 - STEER_TOWARD);
    const amount = drawAmount(rng);
    const signed = isCredit ? amount : -amount;
    sum += signed;
    if (i === 0) {
      first = signed;
      continue;
    }
    if (isCredit) credit += amount;
    else debit += amount;
    if (out !== null) out[i] = signed;
  }
  if (n > 1) {
    if (sum === net) {
      // The last operation would be zero: move the first one by a ruble.
      const bump = first > 0 ? 100 : -100;
      first += bump;
      sum += bump;
    }
    if (first > 0) credit += first;
    else debit -= first;
    if (out !== null) out[0] = first;
  }
  const last = net - sum;
  if (last > 0) credit += last;
  else debit -= last;
  if (out !== null) out[n - 1] = last;
  return { credit, debit };
}

function factsOf(day: number, n: number): DayFacts {
  const c = dayToCivil(day);
  const dayOfYear = day - isoToDay(`${c.year}-01-01`);
  const recent: string[] = [];
  for (let k = 0; k <= RECENT_DAYS; k++) recent.push(dayToRu(day - k));
  return {
    day,
    year: c.year,
    month: c.month,
    dayOfMonth: c.day,
    docBase: ((dayOfYear * n) % 90_000) + 1,
    // The VAT rate went from 20% to 22% on 2026-01-01.
    vatRate: c.year >= 2026 ? 22 : 20,
    recent,
  };
}

function pad4(i: number): string {
  return i < 10 ? `000${i}` : i < 100 ? `00${i}` : i < 1000 ? `0${i}` : String(i);
}

function buildDay(ctx: AccountContext, day: number, n: number, net: number): StatementOperation[] {
  if (day < ANCHOR_DAY) return [];
  const signed = new Float64Array(n);
  planDay(ctx.seed, day, n, net, signed);
  const rng = new Rng(seedOf(ctx.seed, day, STREAM_DETAILS));
  const facts = factsOf(day, n);
  const iso = dayToIso(day);
  const idPrefix = `sbx-${ctx.tag}-${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-`;
  // Every fifth day carries an instruction-like purpose and another day in five a purpose with
  // quotes, a comma and a line break, so any month of data has both whatever the volume.
  const slot = (day + (ctx.seed % 5)) % 5;
  let instructionPending = slot === 0;
  const awkwardFirst = slot === 2;
  const ops: StatementOperation[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const value = signed[i]!;
    const incoming = value > 0;
    const amount = incoming ? value : -value;
    let draft: Draft;
    if (instructionPending && (incoming || i === n - 1)) {
      draft = instructionLikeDraft(rng, facts, ctx, incoming, i);
      instructionPending = false;
    } else if (awkwardFirst && i === 0) {
      draft = awkwardDraft(rng, facts, ctx, incoming, i);
    } else if (rng.next() < 0.002) {
      draft = instructionLikeDraft(rng, facts, ctx, incoming, i);
    } else {
      draft = incoming ? creditDraft(rng, facts, ctx, amount) : debitDraft(rng, facts, ctx, amount, i);
    }
    ops[i] = {
      operation_id: idPrefix + pad4(i),
      direction: incoming ? "credit" : "debit",
      doc_type: draft.doc_type,
      doc_number: draft.doc_number,
      doc_date: iso,
      amount,
      currency: "RUB",
      purpose: draft.purpose,
      payer: incoming ? draft.counterparty : ctx.self,
      payee: incoming ? ctx.self : draft.counterparty,
      uin: null,
      purpose_code: null,
      priority: draft.priority,
    };
  }
  return ops;
}

/** Balance at the start of `isoDate` (kopecks). */
export function openingBalanceAt(spec: SandboxAccountSpec, isoDate: string): number {
  checkSpec(spec);
  return balanceAtDay(contextOf(spec).seed, spec.ops_per_day, spec.opening_balance, isoToDay(isoDate));
}

/** Balance at the end of `isoDate`, after all of that day's operations. */
export function closingBalanceAt(spec: SandboxAccountSpec, isoDate: string): number {
  checkSpec(spec);
  return balanceAtDay(contextOf(spec).seed, spec.ops_per_day, spec.opening_balance, isoToDay(isoDate) + 1);
}

/**
 * Net flow of one day (credits − debits) given the balance at its start; cheap (one random
 * draw). The balance only matters to keep it from going below zero.
 */
export function dayNet(spec: SandboxAccountSpec, isoDate: string, balanceAtStart: number): number {
  checkSpec(spec);
  return netOf(contextOf(spec).seed, isoToDay(isoDate), spec.ops_per_day, balanceAtStart);
}

/** All operations of one day, in the bank's order; exactly ops_per_day of them from the anchor on. */
export function generateDay(spec: SandboxAccountSpec, isoDate: string): StatementOperation[] {
  checkSpec(spec);
  const ctx = contextOf(spec);
  const day = isoToDay(isoDate);
  const n = spec.ops_per_day;
  const balance = balanceAtDay(ctx.seed, n, spec.opening_balance, day);
  return buildDay(ctx, day, n, netOf(ctx.seed, day, n, balance));
}

/**
 * A statement for [dateFrom, dateTo] inclusive. Balances and totals are computed up front from
 * the cheap per-day nets and amount draws; operations are generated lazily, one day at a time,
 * so memory stays bounded by one day (at most 5000 operations) however the result is consumed.
 */
export function generateStatement(
  spec: SandboxAccountSpec,
  dateFrom: string,
  dateTo: string,
): GeneratedStatement {
  checkSpec(spec);
  const ctx = contextOf(spec);
  const from = isoToDay(dateFrom);
  const to = isoToDay(dateTo);
  if (from > to) throw new RangeError("dateFrom must not be after dateTo");
  const n = spec.ops_per_day;
  const opening = balanceAtDay(ctx.seed, n, spec.opening_balance, from);
  const nets: number[] = [];
  let balance = opening;
  let totalCredit = 0;
  let totalDebit = 0;
  let activeDays = 0;
  for (let day = from; day <= to; day++) {
    const net = netOf(ctx.seed, day, n, balance);
    nets.push(net);
    if (day < ANCHOR_DAY) continue;
    const totals = planDay(ctx.seed, day, n, net, null);
    totalCredit += totals.credit;
    totalDebit += totals.debit;
    balance += net;
    activeDays++;
  }
  return {
    opening_balance: opening,
    closing_balance: balance,
    total_credit: totalCredit,
    total_debit: totalDebit,
    operations_count: activeDays * n,
    operations: {
      *[Symbol.iterator]() {
        for (let k = 0; k < nets.length; k++) yield* buildDay(ctx, from + k, n, nets[k]!);
      },
    },
  };
}
