// DirectBank answers every failure as a ResultBank `Error` with a code of the standard's table
// (common-section/tables.md), never svc's JSON envelope: svc's own errors (the token checks, the
// account checks, the statement rules, the HTTP core's limits) are translated here.
import { type AnswersItself, ApiError } from "../core/errors";
import {
  buildResultBank,
  type DirectBankVersion,
  isDirectBankVersion,
  xmlBytes,
} from "../formats/directbank";

const XML_CONTENT_TYPE = "application/xml; charset=utf-8";

/** The standard's descriptions of the codes svc answers with. */
const DESCRIPTIONS: Record<string, string> = {
  "1001": "Указанный сервис временно недоступен",
  "1002": "Не указан обязательный заголовок в запросе",
  "1006": "Сессия закрыта по тайм-ауту",
  "1007": "Некорректный идентификатор сессии",
  "1008": "Доступ к сервису заблокирован",
  "1010": "Внутренняя ошибка",
  "1011": "Некорректный метод аутентификации клиента",
  "1013": "Недостаточно прав на операции с расч.счетом",
  "1201": "Некорректные данные для аутентификации",
  "1202": "Недостаточно прав у пользователя",
  "1203": "Доступ к сервису временно заблокирован",
  "1205": "Услуга не доступна",
  "2001": "Некорректный формат транспортного контейнера",
  "2002": "Дубль транспортного контейнера",
  "2003": "Недопустимый размер транспортного контейнера",
  "2004": "Неизвестный отправитель",
  "2006": "Недопустимая версия формата транспортного контейнера",
  "2007": "Недопустимый код вида электронного документа",
  "2008": "Недопустимая версия формата электронного документа",
  "2010": "Невозможно расшифровать содержимое",
  "2011": "Некорректное сжатие (архивирование)",
  "2101": "Некорректный формат отметки времени",
  "2102": "Транспортный контейнер не найден",
  "2201": "Некорректный формат электронного документа",
  "2205": "Ошибка в реквизитах электронного документа",
  "2206": "Некорректный период запроса выписки",
};

function describe(code: string): string {
  return DESCRIPTIONS[code] ?? DESCRIPTIONS["1010"]!;
}

/** The version a request speaks (its APIVersion, else its AvailableAPIVersion), or the newest. */
function versionOf(request: Request): DirectBankVersion {
  const asked = request.headers.get("apiversion");
  if (isDirectBankVersion(asked)) return asked;
  const available = request.headers.get("availableapiversion");
  return isDirectBankVersion(available) ? available : "2.3.2";
}

export function resultBankResponse(
  xml: string,
  status = 200,
  headers: Record<string, string> = {},
): Response {
  return new Response(xmlBytes(xml), { status, headers: { "content-type": XML_CONTENT_TYPE, ...headers } });
}

/**
 * A refusal in the standard's words. HTTP status 200 like a success (1C reads the ResultBank),
 * except a rate limit (429 with Retry-After) and svc's own failures (5xx).
 */
export class DirectBankError extends Error implements AnswersItself {
  constructor(
    readonly code: string,
    readonly moreInfo?: string,
    readonly status = 200,
    readonly headers: Record<string, string> = {},
  ) {
    super(`${code} ${describe(code)}${moreInfo ? `: ${moreInfo}` : ""}`);
    this.name = "DirectBankError";
  }

  answer(request: Request): Response {
    const xml = buildResultBank(versionOf(request), {
      kind: "error",
      code: this.code,
      description: describe(this.code),
      moreInfo: this.moreInfo,
    });
    return resultBankResponse(xml, this.status, this.headers);
  }
}

/** svc's error as the standard's: the code of the table that says the same thing. */
export function fromApiError(e: ApiError): DirectBankError {
  const headers = Object.fromEntries(
    Object.entries(e.headers ?? {})
      .filter(([k]) => k.toLowerCase() !== "content-type")
      .map(([k, v]) => [k, String(v)]),
  );
  const code = ((): string => {
    switch (e.code) {
      case "invalid_token_format":
      case "invalid_token":
        return "1201";
      case "rate_limited":
        return "1203";
      case "forbidden_ip":
        return "1008";
      case "forbidden_purpose":
      case "forbidden_scope":
        return "1202";
      case "not_found":
      case "forbidden_company":
      case "forbidden_account":
        return "1013";
      case "validation_error":
      case "conflict":
        return "2206";
      case "bank_not_supported":
        return "1205";
      case "payload_too_large":
        return "2003";
      case "service_unavailable":
        return "1001";
      default:
        return "1010";
    }
  })();
  const status = e.code === "rate_limited" ? 429 : e.status >= 500 ? e.status : 200;
  return new DirectBankError(code, e.message, status, headers);
}

export function asDirectBankError(e: unknown): DirectBankError | null {
  if (e instanceof DirectBankError) return e;
  if (e instanceof ApiError) return fromApiError(e);
  return null;
}
