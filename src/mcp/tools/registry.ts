// The one registry of agent tools. Transport-independent: the HTTP JSON-RPC endpoint and the
// relay's REST paths both list and call tools through `listTools` and `callTool`.
import type { Static, TObject } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import type { AccessPolicy } from "../../auth/access-policy";
import type { Principal } from "../../auth/guard";
import type { Clock } from "../../core/clock";
import { ApiError } from "../../core/errors";
import { errorResult, successResult, type ToolResult } from "../notice";
import type { McpReadModel } from "../read-model";
import type { CursorSigner } from "../views";

export const READ_ONLY_ANNOTATIONS = Object.freeze({
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const);

/** What every tool handler may use: read-only queries, the shared access policy, the clock. */
export interface ToolDeps {
  read: McpReadModel;
  access: AccessPolicy;
  clock: Clock;
  balanceStaleSeconds: number;
  /** The business time zone (SVC_TIMEZONE): when a day ends, what "today" is. */
  timezone: string;
  /** Signs and reads the paging cursors. */
  cursors: CursorSigner;
}

/** Who is calling. */
export interface ToolCallContext {
  principal: Principal;
}

export interface ToolDefinition<I extends TObject = TObject, O extends TObject = TObject> {
  name: string;
  title: string;
  description: string;
  inputSchema: I;
  outputSchema: O;
  /** Synchronous, or a promise where the work runs elsewhere (a search in a search thread). */
  handler(args: Static<I>, ctx: ToolCallContext, deps: ToolDeps): Static<O> | Promise<Static<O>>;
  /**
   * What a model reads (`content[0].text`): compact lines, not the JSON of the output, whose first
   * line says in words what the answer holds and what it does not (decisions §15).
   */
  text(output: Static<O>, args: Static<I>, deps: ToolDeps): string;
}

/** A tool as tools/list shows it. */
export interface ToolDescriptor {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
  annotations: typeof READ_ONLY_ANNOTATIONS;
}

/** Tool-level error codes: answered as a result with isError, not as a protocol error. */
const TOOL_ERROR_CODES = [
  "validation_error",
  "not_found",
  "forbidden_account",
  "forbidden_company",
  "not_ready",
  "rate_limited",
] as const;

export class ToolRegistry {
  private readonly tools = new Map<string, ToolDefinition>();

  constructor(
    readonly deps: ToolDeps,
    definitions: ToolDefinition[],
  ) {
    for (const d of definitions) {
      if (this.tools.has(d.name)) throw new Error(`duplicate tool ${d.name}`);
      this.tools.set(d.name, d);
    }
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  get(name: string): ToolDefinition | undefined {
    return this.tools.get(name);
  }

  definitions(): ToolDefinition[] {
    return [...this.tools.values()];
  }
}

/** Plain JSON Schema of a TypeBox schema (TypeBox keeps its own marks in symbol keys). */
function jsonSchema(schema: TObject): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

// A tool-level error result carries `structuredContent: {error}`; clients (the official SDK among
// them) validate structuredContent against outputSchema even when isError is true, so the
// published schema admits both shapes.
const TOOL_ERROR_SCHEMA = {
  type: "object",
  required: ["error"],
  additionalProperties: false,
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      properties: {
        code: { type: "string" },
        message: { type: "string" },
        details: { type: "object", properties: { reason: { type: "string" } } },
      },
    },
  },
};

function outputSchemaOf(schema: TObject): Record<string, unknown> {
  return { type: "object", anyOf: [jsonSchema(schema), TOOL_ERROR_SCHEMA] };
}

export function listTools(registry: ToolRegistry): ToolDescriptor[] {
  return registry.definitions().map((d) => ({
    name: d.name,
    title: d.title,
    description: d.description,
    inputSchema: jsonSchema(d.inputSchema),
    outputSchema: outputSchemaOf(d.outputSchema),
    annotations: READ_ONLY_ANNOTATIONS,
  }));
}

export type ToolCallOutcome =
  | { found: false }
  /** `outcome` is "ok" or the tool-level error code: what the audit entry records. */
  | { found: true; result: ToolResult; outcome: string };

/**
 * Validates the arguments against the tool's input schema and runs it. Bad arguments and access
 * errors become tool-level error results; an unknown name is `{found: false}` (the transport
 * answers -32601 or 404); any other failure is thrown.
 */
export async function callTool(
  registry: ToolRegistry,
  ctx: ToolCallContext,
  name: string,
  args: Record<string, unknown>,
): Promise<ToolCallOutcome> {
  const tool = registry.get(name);
  if (!tool) return { found: false };
  if (!Value.Check(tool.inputSchema, args)) {
    const first = Value.Errors(tool.inputSchema, args).First();
    const field = first?.path.replace(/^\//, "").replaceAll("/", ".") || "arguments";
    const message = first ? `${field}: ${first.message}` : "Неверные аргументы";
    return { found: true, result: errorResult("validation_error", message), outcome: "validation_error" };
  }
  try {
    const output = await tool.handler(args, ctx, registry.deps);
    const text = tool.text(output, args, registry.deps);
    return { found: true, result: successResult(output as Record<string, unknown>, text), outcome: "ok" };
  } catch (e) {
    if (e instanceof ApiError && (TOOL_ERROR_CODES as readonly string[]).includes(e.code)) {
      // Why an account is refused (forbidden_account's reason) is said to an agent as to a client.
      const reason = e.details?.reason;
      const details = typeof reason === "string" ? { reason } : undefined;
      return { found: true, result: errorResult(e.code, e.message, details), outcome: e.code };
    }
    throw e;
  }
}
