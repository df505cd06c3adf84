// Text from clients that svc stores. Both stores keep UTF-8, which cannot hold a lone surrogate
// (what JSON's "\ud800" decodes to): it would be stored as U+FFFD, so "\ud800", "\ud801" and
// "\udc00" would all become one value. Such text is refused, never silently changed.
import { validationError } from "./errors";

const MAX_EXTERNAL_ID = 256;

/** 400 validation_error naming `field` when `value` holds a lone surrogate. */
export function requireWellFormed(field: string, value: string): string {
  if (!value.isWellFormed()) {
    throw validationError(
      field,
      `${field}: одиночный суррогат UTF-16 (\\uD800–\\uDFFF) не сохраняется без искажения`,
    );
  }
  return value;
}

/**
 * A client's idempotency key (`external_id`): trimmed, 1–256 characters, no lone surrogate and no
 * U+FFFD — the character undecodable bytes become on the way in, so two keys sent as different
 * bytes would otherwise be one. Keys that storage or decoding would make equal are refused.
 */
export function checkedExternalId(raw: unknown): string {
  const externalId = typeof raw === "string" ? raw.trim() : "";
  if (externalId.length === 0) throw validationError("external_id", "external_id не может быть пустым");
  if (externalId.length > MAX_EXTERNAL_ID) {
    throw validationError("external_id", `external_id не длиннее ${MAX_EXTERNAL_ID} символов`);
  }
  requireWellFormed("external_id", externalId);
  if (externalId.includes("\uFFFD")) {
    throw validationError(
      "external_id",
      "external_id: символ U+FFFD (след неверной кодировки) не допускается",
    );
  }
  return externalId;
}
