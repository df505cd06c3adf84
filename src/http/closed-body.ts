// JSON bodies with no room for fields the API does not know (decisions §19, the OpenAPI document's
// `additionalProperties: false`): a misspelt optional field is refused with 400 validation_error
// naming it, instead of being dropped silently. The framework removes unknown fields before its
// own check, so they are looked for in the parsed body first (the route's `transform`).
import type { TSchema } from "@sinclair/typebox";
import { validationError } from "../core/errors";
import { readBody } from "./body-policy";

interface ObjectLike {
  type?: string;
  properties?: Record<string, TSchema>;
  additionalProperties?: unknown;
  items?: TSchema;
  anyOf?: TSchema[];
}

/** The schema with `additionalProperties: false` on it and on every object with named fields in it. */
export function closed<T extends TSchema>(schema: T): T {
  close(schema as ObjectLike);
  return schema;
}

function close(s: ObjectLike): void {
  if (s.type === "object" && s.properties) {
    s.additionalProperties = false;
    for (const p of Object.values(s.properties)) close(p as ObjectLike);
  }
  if (s.type === "array" && s.items) close(s.items as ObjectLike);
  for (const branch of s.anyOf ?? []) close(branch as ObjectLike);
}

/** The path of the first field of `value` that the closed `schema` does not name, or null. */
function unknownField(schema: TSchema, value: unknown, path = ""): string | null {
  const s = schema as ObjectLike;
  if (s.type === "object" && s.properties && isPlainObject(value)) {
    for (const [key, v] of Object.entries(value)) {
      const field = path === "" ? key : `${path}.${key}`;
      const property = s.properties[key];
      if (property === undefined) {
        if (s.additionalProperties === false) return field;
        continue;
      }
      const inner = unknownField(property, v, field);
      if (inner !== null) return inner;
    }
  }
  if (s.type === "array" && s.items && Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const inner = unknownField(s.items, value[i], `${path}[${i}]`);
      if (inner !== null) return inner;
    }
  }
  // A union of objects: a field is unknown only when no branch knows it.
  const objects = (s.anyOf ?? []).filter((b) => (b as ObjectLike).type === "object");
  if (objects.length > 0 && isPlainObject(value)) {
    const found = objects.map((b) => unknownField(b, value, path));
    if (found.every((f) => f !== null)) return found[0] ?? null;
  }
  return null;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The route's `transform`: 400 validation_error naming the first field the body schema does not know. */
export function refuseUnknownFields(schema: TSchema) {
  return async (ctx: { body: unknown }) => {
    // Read as the route's body policy says, if not yet (after its token check, as there).
    const field = unknownField(schema, await readBody(ctx));
    if (field !== null) {
      throw validationError(
        field,
        `Неизвестное поле ${field}: в описании запроса (OpenAPI, /docs) его нет; проверьте имя поля`,
      );
    }
  };
}
