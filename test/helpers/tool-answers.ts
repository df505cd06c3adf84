// What every transport must hand an agent for the same call (decisions §15): structuredContent
// that the tool's published outputSchema admits, and a compact text whose lines a model relies on
// (the totals on the first line, one line per operation). Used with the official SDK clients.
import { expect } from "bun:test";
import Ajv2020 from "ajv/dist/2020";

interface Tool {
  name: string;
  outputSchema?: Record<string, unknown>;
}

/** A tools/call result as a client hands it over (the SDK's own types vary by version). */
type Result = Record<string, unknown>;

const ajv = new Ajv2020({ strict: false, allErrors: true });

/** A line of one operation: date, signed amount, counterparty, INN, number, purpose. */
const OPERATION_LINE = /^\d{4}-\d{2}-\d{2} \| [+−][\d ]+,\d{2}( [A-Z]{3})? \| .* \| ИНН \S+ \| № .* \| .*$/u;

/** Checks a successful result of `tool` as any client of any transport receives it. */
export function expectToolAnswer(tool: Tool, result: Result): void {
  expect({ tool: tool.name, isError: result.isError ?? false }).toEqual({ tool: tool.name, isError: false });
  const validate = ajv.compile(tool.outputSchema ?? {});
  expect({
    tool: tool.name,
    valid: validate(result.structuredContent),
    errors: validate.errors ?? null,
  }).toEqual({
    tool: tool.name,
    valid: true,
    errors: null,
  });
  const content = result.content as { type: string; text: string }[];
  expect(content).toHaveLength(1);
  expect(content[0]!.type).toBe("text");
  const text = content[0]!.text;
  const structured = result.structuredContent as {
    operations?: unknown[];
    totals?: { count: number };
    summary?: { operations_count: number };
  };
  const lines = text.split("\n").filter((l) => OPERATION_LINE.test(l));
  expect({ tool: tool.name, lines: lines.length }).toEqual({
    tool: tool.name,
    lines: structured.operations?.length ?? 0,
  });
  const first = text.split("\n")[0]!;
  if (structured.totals && structured.totals.count > 0)
    expect(first).toContain(`найдено ${structured.totals.count} `);
  if (structured.summary) expect(first).toContain(`${structured.summary.operations_count} операц`);
}
