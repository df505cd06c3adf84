// lanes: sqlite
// How the admin pages write and read times, dates and amounts (src/admin/pages/format.ts): Russian
// formats, in the business time zone; and the services' refusals with the forms' labels (messages.ts).
import { describe, expect, test } from "bun:test";
import {
  bankName,
  formatDate,
  formatDateTime,
  formatMoney,
  formatPeriod,
  parseRuAmount,
  parseRuDate,
  parseRuDateTime,
  quoted,
} from "../../src/admin/pages/format";
import { operatorMessage } from "../../src/admin/pages/messages";

const NBSP = "\u00A0";
/** The text with its no-break spaces as plain ones, to compare with what a reader sees. */
const plain = (text: string) => text.replaceAll(NBSP, " ");

describe("amounts", () => {
  test("groups of three, a decimal comma, two decimals, the ruble sign", () => {
    expect(plain(formatMoney(125_000))).toBe("1 250,00 ₽");
    expect(plain(formatMoney(1_250_000))).toBe("12 500,00 ₽");
    expect(plain(formatMoney(123_456_789_01))).toBe("123 456 789,01 ₽");
    expect(plain(formatMoney(0))).toBe("0,00 ₽");
    expect(plain(formatMoney(5))).toBe("0,05 ₽");
    expect(plain(formatMoney(99))).toBe("0,99 ₽");
    expect(plain(formatMoney(100_000))).toBe("1 000,00 ₽");
    expect(plain(formatMoney(99_999))).toBe("999,99 ₽");
  });

  test("negative amounts keep the sign before the digits", () => {
    expect(plain(formatMoney(-125_000))).toBe("-1 250,00 ₽");
    expect(plain(formatMoney(-5))).toBe("-0,05 ₽");
  });

  test("no breakable space inside an amount; other currencies by their sign or code", () => {
    expect(formatMoney(1_250_000)).toBe(`12${NBSP}500,00${NBSP}₽`);
    expect(formatMoney(1_250_000)).not.toContain(" ");
    expect(plain(formatMoney(1_250_000, "USD"))).toBe("12 500,00 $");
    expect(plain(formatMoney(1_250_000, "KZT"))).toBe("12 500,00 KZT");
  });

  test("amounts typed the Russian way and others", () => {
    expect(parseRuAmount("12 500,00")).toBe(1_250_000);
    expect(parseRuAmount(`12${NBSP}500,5`)).toBe(1_250_050);
    expect(parseRuAmount("12500.05")).toBe(1_250_005);
    expect(parseRuAmount("1 250 ₽")).toBe(125_000);
    expect(parseRuAmount("0,01")).toBe(1);
    expect(parseRuAmount("-5")).toBeNull();
    expect(parseRuAmount("1,234")).toBeNull();
    expect(parseRuAmount("сто")).toBeNull();
    expect(parseRuAmount("")).toBeNull();
  });
});

describe("dates and times", () => {
  test("dates as дд.мм.гггг, periods with a dash", () => {
    expect(formatDate("2026-11-03")).toBe("03.11.2026");
    expect(formatDate("не дата")).toBe("не дата");
    expect(formatPeriod("2026-11-01", "2026-11-20")).toBe("01.11.2026\u00A0— 20.11.2026");
    expect(formatPeriod("2026-11-01", "2026-11-01")).toBe("01.11.2026");
  });

  test("instants as дд.мм.гггг ЧЧ:ММ in the business time zone", () => {
    expect(formatDateTime("2026-11-20T09:00:00Z", "Europe/Moscow")).toBe("20.11.2026 12:00");
    // Midnight in Moscow is 21:00 UTC of the day before.
    expect(formatDateTime("2026-11-19T21:00:00.000Z", "Europe/Moscow")).toBe("20.11.2026 00:00");
    expect(formatDateTime("2026-11-19T20:59:59.999Z", "Europe/Moscow")).toBe("19.11.2026 23:59");
    expect(formatDateTime("2026-12-31T21:30:00Z", "Europe/Moscow")).toBe("01.01.2027 00:30");
    expect(formatDateTime("2026-11-20T09:00:00Z", "Asia/Vladivostok")).toBe("20.11.2026 19:00");
    expect(formatDateTime("2026-11-20T09:00:00Z", "UTC")).toBe("20.11.2026 09:00");
    expect(formatDateTime(null, "Europe/Moscow")).toBe("");
  });

  test("typed dates: real ones only", () => {
    expect(parseRuDate("03.11.2026")).toBe("2026-11-03");
    expect(parseRuDate(" 29.02.2028 ")).toBe("2028-02-29");
    expect(parseRuDate("29.02.2026")).toBeNull();
    expect(parseRuDate("2026-11-03")).toBeNull();
    expect(parseRuDate("3.11.2026")).toBeNull();
  });

  test("typed moments on the business time zone's clock", () => {
    expect(parseRuDateTime("20.11.2026 12:00", "Europe/Moscow")).toBe("2026-11-20T09:00:00.000Z");
    expect(parseRuDateTime("20.11.2026", "Europe/Moscow")).toBe("2026-11-19T21:00:00.000Z");
    expect(parseRuDateTime("20.11.2026 00:00", "UTC")).toBe("2026-11-20T00:00:00.000Z");
    // Across a daylight-saving change: Berlin is UTC+1 in winter, UTC+2 in summer.
    expect(parseRuDateTime("15.01.2026 12:00", "Europe/Berlin")).toBe("2026-01-15T11:00:00.000Z");
    expect(parseRuDateTime("15.07.2026 12:00", "Europe/Berlin")).toBe("2026-07-15T10:00:00.000Z");
    expect(parseRuDateTime("20.11.2026 24:00", "Europe/Moscow")).toBeNull();
    expect(parseRuDateTime("2026-11-20T12:00", "Europe/Moscow")).toBeNull();
    // What is shown reads back as the same moment.
    const at = "2026-03-05T17:45:00.000Z";
    expect(parseRuDateTime(formatDateTime(at, "Europe/Moscow"), "Europe/Moscow")).toBe(at);
  });
});

describe("names", () => {
  test("banks are named as operators know them", () => {
    expect(bankName("tochka")).toBe("Точка");
    expect(bankName("file")).toBe("Файлы выписок 1С");
    expect(bankName("sandbox")).toBe("Тестовый банк");
    expect(bankName("somebank")).toBe("somebank");
  });

  test("quotes inside a quoted name become „лапки“: no «…«…»…»", () => {
    expect(quoted("ООО «Василёк»")).toBe("«ООО „Василёк“»");
    expect(quoted('ООО "Ромашка"')).toBe("«ООО „Ромашка“»");
    expect(quoted("ИП Петров")).toBe("«ИП Петров»");
  });
});

describe("the services' refusals on the pages", () => {
  test("a field the API names is named by the form's label; other messages stay as they are", () => {
    expect(operatorMessage("rate_limit_per_minute: целое от 1 до 10000")).toBe(
      "Лимит запросов в минуту: целое от 1 до 10000",
    );
    expect(operatorMessage("sandbox.ops_per_day: от 1 до 5000")).toBe("Операций в день: от 1 до 5000");
    expect(operatorMessage("unknown_field: что-то")).toBe("unknown_field: что-то");
    expect(operatorMessage("Счёт не найден")).toBe("Счёт не найден");
  });
});
