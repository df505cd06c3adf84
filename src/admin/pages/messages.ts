// The services' refusals as an operator reads them on the pages. A service names the field it
// refuses the way the API does (`rate_limit_per_minute: целое от 1 до 10000`), which an integrator
// needs; the pages put the form's own label in its place.
import { ApiError } from "../../core/errors";

/** The API's field names the pages' forms show, by the label they show them with. */
const FIELD_LABELS: Record<string, string> = {
  company_id: "Компания",
  name: "Название",
  inn: "ИНН",
  kpp: "КПП",
  bank: "Банк",
  bank_account_id: "Счёт",
  account_number: "Номер счёта",
  bik: "БИК",
  currency: "Валюта",
  alias: "Псевдоним",
  environment: "Среда банка",
  sandbox: "Тестовый банк",
  "sandbox.ops_per_day": "Операций в день",
  credentials: "Доступ к банку",
  accounts: "Счета",
  scope_read_statements: "Чтение выписок",
  scope_send_payments: "Платежи",
  allowed_ips: "Разрешённые IP-адреса",
  rate_limit_per_minute: "Лимит запросов в минуту",
  expires_at: "Действует до",
  date_from: "С даты",
  date_to: "По дату",
  external_id: "Внешний номер",
  file: "Файл",
  enabled: "Синхронизация",
  since: "С даты",
  interval_minutes: "Интервал, минут",
  version: "Версия формата",
};

/** `message` with a leading API field name (`field: …`) replaced by the form's label. */
export function operatorMessage(message: string): string {
  const named = /^([a-z_]+(?:\.[a-z_]+)?): /u.exec(message);
  const label = named ? FIELD_LABELS[named[1]!] : undefined;
  return label ? `${label}: ${message.slice(named![0].length)}` : message;
}

/** The same refusal, worded for the pages. */
export function forOperators(error: ApiError): ApiError {
  const message = operatorMessage(error.message);
  return message === error.message
    ? error
    : new ApiError(error.code, message, error.details, error.headers, error.status);
}
