// An account's coverage over REST and the admin API (decisions §16): the days of a period svc
// holds in full, in part or not at all, computed as the agent tools compute it (coverage.ts).
import { type Static, Type } from "@sinclair/typebox";
import { t } from "elysia";
import type { Clock } from "../core/clock";
import { validationError } from "../core/errors";
import { daysInclusive, isValidIsoDate } from "../formats/dates";
import type { CoverageReader } from "./coverage";

const MAX_COVERAGE_DAYS = 366;

const Range = Type.Object({ date_from: Type.String(), date_to: Type.String() });

export const CoverageSchema = Type.Object({
  bank_account_id: Type.String(),
  date_from: Type.String(),
  date_to: Type.String(),
  complete: Type.Boolean(),
  covered: Type.Array(Range),
  partial: Type.Array(Type.Object({ date: Type.String(), as_of: Type.String() })),
  missing: Type.Array(Range),
});
export type CoverageView = Static<typeof CoverageSchema>;

export const CoverageQuery = t.Object({
  date_from: t.String({ description: "YYYY-MM-DD" }),
  date_to: t.String({ description: "YYYY-MM-DD, inclusive; at most 366 days" }),
});

export class AccountCoverage {
  constructor(
    private readonly reader: CoverageReader,
    private readonly clock: Clock,
  ) {}

  /** Days `dateFrom`..`dateTo` of an account (already checked to be the caller's). */
  of(bankAccountId: string, dateFrom: string, dateTo: string): CoverageView {
    if (!isValidIsoDate(dateFrom)) throw validationError("date_from", "date_from: ожидается дата YYYY-MM-DD");
    if (!isValidIsoDate(dateTo)) throw validationError("date_to", "date_to: ожидается дата YYYY-MM-DD");
    if (dateFrom > dateTo) throw validationError("date_from", "date_from не может быть позже date_to");
    if (daysInclusive(dateFrom, dateTo) > MAX_COVERAGE_DAYS)
      throw validationError("date_to", `Период не длиннее ${MAX_COVERAGE_DAYS} дней`, {
        max_days: MAX_COVERAGE_DAYS,
      });
    const now = this.clock.now();
    const coverage = this.reader.read(bankAccountId, dateFrom, dateTo, now);
    return { bank_account_id: bankAccountId, date_from: dateFrom, date_to: dateTo, ...coverage };
  }
}
