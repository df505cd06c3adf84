// What each dialect does its own way, picked here from the port so that the stores above it
// never ask which database they hold (docs/architecture.md, "dialect slots"). Each answer is
// implemented once per dialect, in sqlite/ and pg/.
import type { OperationWriter } from "./operation-values";
import { postgresOperationWriter } from "./pg/operation-writer";
import type { SqlPort } from "./sql-port";
import { sqliteOperationWriter } from "./sqlite/operation-writer";

/** How a statement's operations are stored, chunk by chunk (the same rows on both). */
export function operationWriter(port: SqlPort): OperationWriter {
  return port.dialect === "postgres" ? postgresOperationWriter(port) : sqliteOperationWriter(port);
}
