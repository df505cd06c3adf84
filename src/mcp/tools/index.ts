// The six agent tools, all read-only. There is no other place where a tool can be added.
import { getBalanceTool } from "./get-balance";
import { getStatementTool } from "./get-statement";
import { listBankAccountsTool } from "./list-bank-accounts";
import { listCompaniesTool } from "./list-companies";
import { listStatementsTool } from "./list-statements";
import { type ToolDefinition, type ToolDeps, ToolRegistry } from "./registry";
import { searchOperationsTool } from "./search-operations";

export const TOOL_DEFINITIONS: readonly ToolDefinition[] = [
  listCompaniesTool,
  listBankAccountsTool,
  getBalanceTool,
  listStatementsTool,
  getStatementTool,
  searchOperationsTool,
] as ToolDefinition[];

export function createToolRegistry(deps: ToolDeps): ToolRegistry {
  return new ToolRegistry(deps, [...TOOL_DEFINITIONS]);
}
