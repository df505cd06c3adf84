// The audit log's columns, in the order entries are written and exported.

/** The columns an entry fills (the id is the database's). */
export const AUDIT_COLUMNS = [
  "at",
  "actor",
  "api_token_id",
  "mcp_session_id",
  "action",
  "tool",
  "target",
  "arguments",
  "outcome",
  "duration_ms",
  "request_id",
  "ip",
  "transport",
  "protocol_revision",
] as const;
