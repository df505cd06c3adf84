// Checks HTTP traffic against Tochka's own OpenAPI document (test/fixtures/tochka-openapi.json, cut
// from the bank's published file by scripts/tochka-fixture.ts). The fake Tochka server runs every
// request it receives and every answer it gives through here, so neither svc nor the fake can drift
// from what the bank documents.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import Ajv2020, { type ErrorObject, type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const TOCHKA_OPENAPI_PATH = resolve(import.meta.dir, "../fixtures/tochka-openapi.json");

/**
 * Statuses the document never declares (it lists only 200, 400, 403, 404, 424 and 500) that the
 * bank's gateway answers all the same: 401 for a missing or dead token, 429 when throttling, 502-504
 * when a backend is down. A caller may opt in to them; their bodies are then held to ErrorResponse.
 */
export const GATEWAY_STATUSES: readonly number[] = [401, 429, 502, 503, 504];

/**
 * Path parameters that may span two segments. Tochka's accountId is "{20-digit number}/{BIK}" and
 * goes into the path with its slash as it is (the document's example: "40817810802000000008/044525104").
 */
const TWO_SEGMENT_PARAMS = new Set(["accountId"]);

const HTTP_METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];
const DOC_ID = "https://tochka.test/openapi.json";
/** The same document with every object schema closed (see closeObjects). */
const CLOSED_DOC_ID = "https://tochka.test/openapi-closed.json";

export interface ContractRequest {
  method: string;
  /** Relative to the API base (…/uapi or …/sandbox/v2), without the query string. */
  path: string;
  query?: URLSearchParams | Readonly<Record<string, string>>;
  /** The parsed JSON body; undefined when the request had none. */
  body?: unknown;
}

export interface ContractResponse {
  method: string;
  path: string;
  status: number;
  body: unknown;
}

export interface ResponseCheckOptions {
  /** Undeclared statuses to accept (typically GATEWAY_STATUSES), checked against ErrorResponse. */
  gatewayStatuses?: readonly number[];
}

export interface OperationMatch {
  /** The path template as the document spells it, e.g. "/payment/v1.0/status/{requestId}". */
  template: string;
  method: string;
  params: Record<string, string>;
  /** Permissions listed in the operation's `security` requirement. */
  permissions: string[];
}

interface Parameter {
  name: string;
  in: string;
  required: boolean;
  validate: ValidateFunction;
  isArray: boolean;
}

interface Operation {
  method: string;
  template: string;
  segments: string[];
  parameters: Parameter[];
  permissions: string[];
  body: { required: boolean; validate: ValidateFunction | null } | null;
  responses: Map<string, ValidateFunction | null>;
}

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** One JSON-pointer token, escaped for use inside a URI fragment. */
function pointerToken(token: string): string {
  return encodeURIComponent(token.replaceAll("~", "~0").replaceAll("/", "~1"));
}

function pointer(...tokens: string[]): string {
  return `#/${tokens.map(pointerToken).join("/")}`;
}

/**
 * The document sets additionalProperties nowhere, so a misspelt optional field would pass. Requests
 * are what svc writes, so they are checked against a closed copy in which every object schema that
 * lists properties refuses the rest. Answers keep the open schemas: the bank may add fields.
 */
function closeObjects(value: Json): Json {
  if (Array.isArray(value)) return value.map(closeObjects);
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(value)) out[key] = closeObjects(child);
  if (isObject(value["properties"]) && value["additionalProperties"] === undefined) {
    out["additionalProperties"] = false;
  }
  return out;
}

function formatErrors(where: string, errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => {
    let detail = "";
    if (e.keyword === "enum")
      detail = ` (${(e.params as { allowedValues: unknown[] }).allowedValues.join(", ")})`;
    if (e.keyword === "additionalProperties") {
      detail = ` ("${(e.params as { additionalProperty: string }).additionalProperty}" is not in the document)`;
    }
    return `${where}: ${e.instancePath === "" ? "(root)" : e.instancePath} ${e.message ?? e.keyword}${detail}`;
  });
}

function loadContract(): { operations: Operation[]; errorResponse: ValidateFunction } {
  const doc = JSON.parse(readFileSync(TOCHKA_OPENAPI_PATH, "utf8")) as JsonObject;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  // Query and path values arrive as strings; coercion lets "2" satisfy an integer parameter.
  const paramAjv = new Ajv2020({ strict: false, allErrors: true, coerceTypes: true });
  for (const instance of [ajv, paramAjv]) {
    addFormats(instance);
    instance.addSchema({ ...doc, $id: DOC_ID });
  }
  ajv.addSchema({ ...(closeObjects(doc) as JsonObject), $id: CLOSED_DOC_ID });

  const paths = doc["paths"];
  if (!isObject(paths)) throw new Error(`${TOCHKA_OPENAPI_PATH}: no paths`);
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    const shared = Array.isArray(item["parameters"]) ? item["parameters"] : [];
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!isObject(op)) continue;
      const at = (...tokens: string[]) => `${DOC_ID}${pointer("paths", template, method, ...tokens)}`;

      const parameters: Parameter[] = [];
      const own = Array.isArray(op["parameters"]) ? op["parameters"] : [];
      const all: [Json, string][] = [
        ...shared.map((p, i): [Json, string] => [
          p,
          `${DOC_ID}${pointer("paths", template, "parameters", String(i))}`,
        ]),
        ...own.map((p, i): [Json, string] => [p, at("parameters", String(i))]),
      ];
      for (const [p, ref] of all) {
        if (!isObject(p) || typeof p["name"] !== "string" || typeof p["in"] !== "string") continue;
        const schema = p["schema"];
        parameters.push({
          name: p["name"],
          in: p["in"],
          required: p["required"] === true || p["in"] === "path",
          validate: paramAjv.compile({ $ref: `${ref}/schema` }),
          isArray: isObject(schema) && schema["type"] === "array",
        });
      }

      let body: Operation["body"] = null;
      const requestBody = op["requestBody"];
      if (isObject(requestBody)) {
        const content = requestBody["content"];
        const hasJson = isObject(content) && isObject(content["application/json"]);
        body = {
          required: requestBody["required"] === true,
          validate: hasJson
            ? ajv.compile({
                $ref: `${CLOSED_DOC_ID}${pointer("paths", template, method, "requestBody", "content", "application/json", "schema")}`,
              })
            : null,
        };
      }

      const responses = new Map<string, ValidateFunction | null>();
      const declared = op["responses"];
      if (isObject(declared)) {
        for (const [status, response] of Object.entries(declared)) {
          const content = isObject(response) ? response["content"] : undefined;
          const json = isObject(content) ? content["application/json"] : undefined;
          responses.set(
            status,
            isObject(json) && json["schema"] !== undefined
              ? ajv.compile({ $ref: at("responses", status, "content", "application/json", "schema") })
              : null,
          );
        }
      }

      const permissions: string[] = [];
      const security = op["security"];
      if (Array.isArray(security)) {
        for (const requirement of security) {
          if (!isObject(requirement)) continue;
          for (const scopes of Object.values(requirement)) {
            if (Array.isArray(scopes)) for (const s of scopes) if (typeof s === "string") permissions.push(s);
          }
        }
      }

      operations.push({
        method: method.toUpperCase(),
        template,
        segments: template.split("/").slice(1),
        parameters,
        permissions,
        body,
        responses,
      });
    }
  }

  // Undeclared gateway statuses are held to the document's generic error shape.
  const errorResponse = ajv.compile({
    $ref: `${DOC_ID}${pointer("components", "schemas", "ErrorResponse")}`,
  });
  return { operations, errorResponse };
}

const { operations, errorResponse: gatewayErrorValidator } = loadContract();

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Matches request segments against template segments; a TWO_SEGMENT_PARAMS parameter takes one or
 * two segments. Returns the parameters of every way the template fits.
 */
function fit(template: string[], segments: string[], ti = 0, si = 0): Record<string, string>[] {
  if (ti === template.length) return si === segments.length ? [{}] : [];
  const part = template[ti] as string;
  const param = /^\{(.+)\}$/.exec(part)?.[1];
  if (param === undefined) {
    return segments[si] === part ? fit(template, segments, ti + 1, si + 1) : [];
  }
  const out: Record<string, string>[] = [];
  const widths = TWO_SEGMENT_PARAMS.has(param) ? [1, 2] : [1];
  for (const width of widths) {
    const taken = segments.slice(si, si + width);
    if (taken.length < width || taken.some((s) => s === "")) continue;
    for (const rest of fit(template, segments, ti + 1, si + width)) {
      out.push({ [param]: taken.map(decodeSegment).join("/"), ...rest });
    }
  }
  return out;
}

function literalCount(op: Operation): number {
  return op.segments.filter((s) => !s.startsWith("{")).length;
}

/**
 * The operation a request addresses, or a problem saying why there is none. When several templates
 * fit, the one with more literal segments wins (it is the more specific).
 */
export function matchOperation(method: string, path: string): OperationMatch | string {
  const bare = path.split("?")[0] as string;
  if (!bare.startsWith("/")) return `path "${path}" must start with "/"`;
  const segments = bare.split("/").slice(1);
  let best: { op: Operation; params: Record<string, string> } | null = null;
  let pathKnown = false;
  for (const op of operations) {
    const fits = fit(op.segments, segments);
    if (fits.length === 0) continue;
    pathKnown = true;
    if (op.method !== method.toUpperCase()) continue;
    if (best === null || literalCount(op) > literalCount(best.op)) best = { op, params: fits[0] ?? {} };
  }
  if (best === null) {
    return pathKnown
      ? `${method.toUpperCase()} is not declared for ${bare}`
      : `${method.toUpperCase()} ${bare}: no such path in the document`;
  }
  return {
    template: best.op.template,
    method: best.op.method,
    params: best.params,
    permissions: [...best.op.permissions],
  };
}

function findOperation(method: string, template: string): Operation {
  const op = operations.find((o) => o.method === method && o.template === template);
  if (op === undefined) throw new Error(`operation ${method} ${template} vanished`);
  return op;
}

function queryValues(query: ContractRequest["query"], name: string): string[] {
  if (query === undefined) return [];
  if (query instanceof URLSearchParams) return query.getAll(name);
  const value = query[name];
  return value === undefined ? [] : [value];
}

/** Problems with a request svc sends: path, method, parameters and JSON body. Empty when it conforms. */
export function validateRequest(req: ContractRequest): string[] {
  const match = matchOperation(req.method, req.path);
  const where = `request ${req.method.toUpperCase()} ${req.path}`;
  if (typeof match === "string") return [`${where}: ${match}`];
  const op = findOperation(match.method, match.template);
  const problems: string[] = [];

  for (const p of op.parameters) {
    if (p.in === "header" || p.in === "cookie") continue;
    const values = p.in === "path" ? [match.params[p.name] ?? ""] : queryValues(req.query, p.name);
    if (values.length === 0) {
      if (p.required) problems.push(`${where}: required ${p.in} parameter "${p.name}" is missing`);
      continue;
    }
    const value: unknown = p.isArray ? values : values[values.length - 1];
    if (!p.validate(value))
      problems.push(...formatErrors(`${where}: ${p.in} parameter "${p.name}"`, p.validate.errors));
  }

  if (op.body === null) {
    if (req.body !== undefined) problems.push(`${where}: the operation takes no request body`);
  } else if (req.body === undefined) {
    if (op.body.required) problems.push(`${where}: the request body is required`);
  } else if (op.body.validate !== null && !op.body.validate(req.body)) {
    problems.push(...formatErrors(`${where}: body`, op.body.validate.errors));
  }
  return problems;
}

/** Problems with an answer: the status must be declared and the body must fit its schema. */
export function validateResponse(res: ContractResponse, options: ResponseCheckOptions = {}): string[] {
  const where = `answer ${res.status} to ${res.method.toUpperCase()} ${res.path}`;
  const match = matchOperation(res.method, res.path);
  if (typeof match === "string") return [`${where}: ${match}`];
  const op = findOperation(match.method, match.template);

  const status = String(res.status);
  const declared = op.responses.has(status)
    ? status
    : op.responses.has(`${status[0]}XX`)
      ? `${status[0]}XX`
      : op.responses.has("default")
        ? "default"
        : null;
  let validate: ValidateFunction | null;
  if (declared !== null) {
    validate = op.responses.get(declared) ?? null;
  } else if (options.gatewayStatuses?.includes(res.status) === true) {
    validate = gatewayErrorValidator;
  } else {
    const known = [...op.responses.keys()].join(", ");
    return [
      `${where}: status ${res.status} is not declared for ${op.method} ${op.template} (declared: ${known})`,
    ];
  }
  if (validate === null || validate(res.body)) return [];
  return formatErrors(where, validate.errors);
}
