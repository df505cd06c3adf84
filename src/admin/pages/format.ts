// How every admin page writes and reads times, dates, amounts, bank names and quoted names: the
// Russian way, in the business time zone (SVC_TIMEZONE). One module, so that no page formats on
// its own. Spaces inside an amount and before its sign are no-break spaces: an amount never breaks
// across lines.
import { dateTimeInZone, instantOfWallTime } from "../../core/clock";
import { isoToRu, isValidIsoDate, ruToIso } from "../../formats/dates";
import { formatRubles, parseAmountToKopecks } from "../../formats/money";

const NBSP = "\u00A0";

const CURRENCY_SIGN: Record<string, string> = { RUB: "₽", RUR: "₽", USD: "$", EUR: "€", CNY: "¥" };

const CURRENCY_NAME: Record<string, string> = {
  RUB: "рубли",
  RUR: "рубли",
  USD: "доллары США",
  EUR: "евро",
  CNY: "юани",
};

/** A currency by its Russian name; null for a code without one (shown as the code). */
export function currencyName(code: string): string | null {
  return CURRENCY_NAME[code] ?? null;
}

/** What a typed date looks like (an input's `pattern`): дд.мм.гггг. */
export const RU_DATE_PATTERN = "\\d{2}\\.\\d{2}\\.\\d{4}";

/** Kopecks as `12 500,00 ₽` (`-1 250,00 ₽` for a negative amount); other currencies by their sign. */
export function formatMoney(kopecks: number, currency = "RUB"): string {
  const sign = CURRENCY_SIGN[currency] ?? currency;
  return `${formatRubles(kopecks).replaceAll(" ", NBSP)}${NBSP}${sign}`;
}

/** `2026-11-03` as `03.11.2026`; anything that is not such a date is shown as it is. */
export function formatDate(iso: string): string {
  return isValidIsoDate(iso) ? isoToRu(iso) : iso;
}

/**
 * A period of days: `01.11.2026 — 20.11.2026` (a no-break space before the dash: a line may break
 * only after it), or one date when it is one day.
 */
export function formatPeriod(from: string, to: string): string {
  return from === to ? formatDate(from) : `${formatDate(from)}${NBSP}— ${formatDate(to)}`;
}

/** An instant (ISO text) as `20.11.2026 12:00` in the business time zone; empty for none. */
export function formatDateTime(iso: string | null | undefined, timeZone: string): string {
  if (!iso) return "";
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  const wall = dateTimeInZone(new Date(ms), timeZone);
  return `${isoToRu(wall.slice(0, 10))} ${wall.slice(11, 16)}`;
}

/** A date typed as `дд.мм.гггг` as `YYYY-MM-DD`; null unless it is a real date. */
export function parseRuDate(text: string): string | null {
  return ruToIso(text);
}

const RU_DATE_TIME_RE = /^(\d{2}\.\d{2}\.\d{4})(?:\s+([01]\d|2[0-3]):([0-5]\d))?$/;

/**
 * A moment typed as `дд.мм.гггг ЧЧ:ММ` (or only the date: its midnight) on the wall clock of the
 * business time zone, as an ISO instant; null when it is no such moment.
 */
export function parseRuDateTime(text: string, timeZone: string): string | null {
  const m = RU_DATE_TIME_RE.exec(text.trim());
  if (!m) return null;
  const day = ruToIso(m[1]!);
  if (day === null) return null;
  return instantOfWallTime(`${day}T${m[2] ?? "00"}:${m[3] ?? "00"}:00`, timeZone)?.toISOString() ?? null;
}

/**
 * An amount typed the Russian way or any other (`12 500,00`, `12500.5`, `1 250 ₽`) in kopecks;
 * null for anything else (negative amounts, more than two decimals, letters).
 */
export function parseRuAmount(text: string): number | null {
  const plain = text.replace(/[\s\u00A0\u202F]/gu, "").replace(/(₽|руб\.?)$/u, "");
  return plain === "" ? null : parseAmountToKopecks(plain);
}

const BANK_NAMES: Record<string, string> = {
  tochka: "Точка",
  file: "Файлы выписок 1С",
  directbank: "1С:ДиректБанк",
  sandbox: "Тестовый банк",
  sandbox_failing: "Тестовый банк (всегда ошибка)",
  sandbox_no_statements: "Тестовый банк (без выписок)",
};

/** A bank kind as operators read it (`tochka` is «Точка»); an unknown kind as it is. */
export function bankName(bank: string): string {
  return BANK_NAMES[bank] ?? bank;
}

/**
 * A name in «ёлочках»: quotes inside it become „лапки“ (`ООО «Василёк»` is «ООО „Василёк“»), so no
 * quotes are nested in quotes of the same kind.
 */
export function quoted(name: string): string {
  const inner = name
    .replace(/«/gu, "„")
    .replace(/»/gu, "“")
    .replace(/"([^"]*)"/gu, "„$1“");
  return `«${inner}»`;
}
