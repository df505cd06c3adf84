// The statement-only login of a bank's 1C:DirectBank service (decisions §18): the bank's settings
// file (or its address and the customer id) and the user and password of 1C's automatic
// statements. Stored sealed as given; read into an exchange's parameters on every call.
import {
  DirectBankFormatError,
  type DirectBankVersion,
  isDirectBankVersion,
  parseSettings,
} from "../../formats/directbank";
import type { CredentialsCheck } from "../adapter";

/** Days one StatementRequest covers at most unless the login says otherwise. */
const DEFAULT_MAX_DAYS = 7;

/** What an exchange with the bank needs, read from the stored login. */
export interface DirectBankLogin {
  url: string;
  customerId: string;
  version: DirectBankVersion;
  compress: boolean;
  user: string;
  password: string;
  /** The customer as the settings name it (the packets' sender). */
  customer: { name?: string; inn?: string; kpp?: string };
  /** The bank's BIC and the account numbers its settings name (account discovery). */
  bank?: { bic: string; accounts: string[] };
  maxDays: number;
  /** The address came from a settings file (not given as `url`). */
  fromSettings: boolean;
}

/** A login that cannot work, with the field of `credentials` at fault. */
export class LoginProblem extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = "LoginProblem";
  }
}

const SHAPE =
  'Реквизиты DirectBank: {"kind":"directbank","settings":"<XML настроек обмена>","login":"…","password":"…"} или url и customer_id вместо settings';

const text = (v: unknown): v is string => typeof v === "string" && v.trim() !== "";

/** Plain http is allowed only to this machine (a bank's test stand, the tests' fake bank). */
function checkUrl(value: string, field: string): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new LoginProblem(field, "Адрес сервиса банка: ожидается https://…");
  }
  const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) {
    throw new LoginProblem(field, "Адрес сервиса банка: только https (http лишь для localhost)");
  }
  return url.toString().replace(/\/+$/, "");
}

/** The stored login read into an exchange's parameters; LoginProblem names what is wrong. */
export function readLogin(value: unknown): DirectBankLogin {
  if (typeof value !== "object" || value === null || (value as { kind?: unknown }).kind !== "directbank") {
    throw new LoginProblem("credentials", SHAPE);
  }
  const v = value as Record<string, unknown>;
  if (!text(v.password)) throw new LoginProblem("credentials.password", "Укажите пароль выписок банка");
  const maxDays = v.max_days ?? DEFAULT_MAX_DAYS;
  if (typeof maxDays !== "number" || !Number.isInteger(maxDays) || maxDays < 1 || maxDays > 366) {
    throw new LoginProblem("credentials.max_days", "max_days: целое от 1 до 366");
  }
  const common = { user: text(v.login) ? v.login.trim() : "", password: v.password, maxDays };
  const withUser = (login: DirectBankLogin): DirectBankLogin => {
    if (!login.user) throw new LoginProblem("credentials.login", "Укажите логин выписок банка");
    return login;
  };
  if (text(v.settings)) {
    let settings: ReturnType<typeof parseSettings>;
    try {
      settings = parseSettings(v.settings);
    } catch (e) {
      if (!(e instanceof DirectBankFormatError)) throw e;
      throw new LoginProblem("credentials.settings", `Это не файл настроек обмена DirectBank: ${e.message}`);
    }
    if (!isDirectBankVersion(settings.version)) {
      throw new LoginProblem(
        "credentials.settings",
        `Версия формата ${settings.version} не поддерживается (2.3.2 или 2.2.2)`,
      );
    }
    return withUser({
      ...common,
      // The statement-only login the settings name (ReceiptStatement), unless one is given.
      user: common.user || (settings.receiptStatement?.login.trim() ?? ""),
      url: checkUrl(settings.bankServerAddress, "credentials.settings"),
      fromSettings: true,
      customerId: settings.customerId,
      version: settings.version,
      compress: settings.compress,
      customer: { name: settings.recipient.name, inn: settings.recipient.inn, kpp: settings.recipient.kpp },
      bank: { bic: settings.sender.bic, accounts: settings.accounts ?? [] },
    });
  }
  if (!text(v.url)) throw new LoginProblem("credentials.settings", SHAPE);
  if (!text(v.customer_id))
    throw new LoginProblem("credentials.customer_id", "Укажите идентификатор клиента в банке");
  const version = v.version ?? "2.3.2";
  if (!isDirectBankVersion(version as string)) {
    throw new LoginProblem("credentials.version", "Версия формата: 2.3.2 или 2.2.2");
  }
  return withUser({
    ...common,
    url: checkUrl(v.url, "credentials.url"),
    fromSettings: false,
    customerId: v.customer_id.trim(),
    version: version as DirectBankVersion,
    compress: false,
    customer: {},
  });
}

export function checkLogin(value: unknown): CredentialsCheck {
  try {
    readLogin(value);
    return { ok: true, status: "active" };
  } catch (e) {
    if (e instanceof LoginProblem) return { ok: false, message: e.message, field: e.field };
    throw e;
  }
}
