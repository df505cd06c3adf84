// Identifiers: svc's ids are UUIDs (any version from a client; v4 where svc makes them).

/** A UUID as a JSON Schema pattern (tool arguments: every JSON Schema client understands one). */
export const UUID_PATTERN = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";

const UUID = new RegExp(UUID_PATTERN);
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

export function isUuidV4(value: string): boolean {
  return UUID_V4.test(value);
}
