// The one error family of the service. Every HTTP error body is built by `errorEnvelope`,
// from an ApiError; codes and statuses are the specification's table.
import { type Static, Type } from "@sinclair/typebox";

export const ERROR_STATUS = {
  validation_error: 400,
  "invalid request body": 400,
  invalid_token_format: 401,
  invalid_token: 401,
  forbidden_ip: 403,
  forbidden_purpose: 403,
  forbidden_scope: 403,
  forbidden_account: 403,
  forbidden_company: 403,
  forbidden_origin: 403,
  insufficient_scope: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  not_ready: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  account_mismatch: 422,
  rate_limited: 429,
  internal_error: 500,
  bank_error: 500,
  bank_not_supported: 501,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

// Russian for every code except "invalid request body", which the specification fixes in English.
const DEFAULT_MESSAGE: Record<ErrorCode, string> = {
  validation_error: "Ошибка валидации запроса",
  "invalid request body": "invalid request body",
  invalid_token_format: "Отсутствует заголовок Authorization или неверный формат токена",
  invalid_token: "Токен не найден, отозван или истёк",
  forbidden_ip: "Запрос с IP-адреса, не разрешённого для токена",
  forbidden_purpose: "Назначение токена не подходит для этого метода",
  forbidden_scope: "У токена нет нужного права",
  forbidden_account: "Нет доступа к счёту",
  forbidden_company: "Счёт принадлежит другой компании",
  forbidden_origin: "Источник запроса (Origin) не разрешён",
  insufficient_scope: "У доступа нет нужной области (scope)",
  not_found: "Ресурс не найден",
  method_not_allowed: "Метод не поддерживается",
  conflict: "Конфликт с ранее переданными данными для этого external_id",
  not_ready: "Выписка ещё не готова",
  payload_too_large: "Тело запроса превышает допустимый размер",
  unsupported_media_type: "Тип тела запроса (Content-Type) не поддерживается этим методом",
  account_mismatch: "Счёт плательщика в файле не совпадает с указанным счётом",
  rate_limited: "Превышен лимит запросов",
  internal_error: "Внутренняя ошибка сервиса",
  bank_error: "Ошибка банка",
  bank_not_supported: "Банк не поддерживает эту операцию",
  service_unavailable: "Сервис временно недоступен",
};

export type ErrorDetails = Record<string, unknown>;

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly details?: ErrorDetails,
    readonly headers?: Record<string, string>,
    /** Only where the specification gives a code another status (422 validation_error of a 1C file). */
    status?: number,
  ) {
    super(message ?? DEFAULT_MESSAGE[code]);
    this.name = "ApiError";
    this.status = status ?? ERROR_STATUS[code];
  }
}

/**
 * An error of another layer (a bank, the database) that says itself how a request it ends is
 * answered, so that the one error handler needs to know no layer's errors.
 */
export interface AnsweredAsApiError {
  toApiError(): ApiError;
  /** Logged with this message (and the error's own, never a stack) when it ends a request. */
  readonly logAs?: string;
}

/** The envelope's error for a thrown value, when it is one or says how it is answered. */
export function apiErrorOf(error: unknown): ApiError | null {
  if (error instanceof ApiError) return error;
  const answered = error as Partial<AnsweredAsApiError> | null;
  return typeof answered?.toApiError === "function" ? answered.toApiError() : null;
}

/**
 * An error that carries its own answer, in the protocol of the routes that throw it (an OAuth
 * error body, a refusal in a route's own words): the one error handler sends it as it is.
 */
export interface AnswersItself {
  answer(request: Request): Response;
}

/** The answer a thrown value carries itself, if it does. */
export function ownAnswerOf(error: unknown, request: Request): Response | null {
  const own = error as Partial<AnswersItself> | null;
  return typeof own?.answer === "function" ? own.answer(request) : null;
}

export function validationError(field: string, message: string, details?: ErrorDetails): ApiError {
  return new ApiError("validation_error", message, { field, ...details });
}

export function invalidRequestBody(details?: ErrorDetails): ApiError {
  return new ApiError("invalid request body", "invalid request body", details);
}

const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

/** Every error body: one schema for the OpenAPI document, the contract tests and the type. */
export const ErrorEnvelopeSchema = Type.Object({
  error: Type.Object({
    code: Type.Union(ERROR_CODES.map((code) => Type.Literal(code))),
    message: Type.String(),
    details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  }),
});
export type ErrorEnvelope = Static<typeof ErrorEnvelopeSchema>;

export function errorEnvelope(error: ApiError): ErrorEnvelope {
  const body: ErrorEnvelope = { error: { code: error.code, message: error.message } };
  if (error.details && Object.keys(error.details).length > 0) body.error.details = error.details;
  return body;
}
