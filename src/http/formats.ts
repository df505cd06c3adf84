// TypeBox string formats the routes use. @elysiajs/openapi replaces some of TypeBox's formats
// with checks that build a schema object on every call ("uuid" among them), which made the UUID
// check of a path parameter a fifth of the cost of a request. These plain regular expressions are
// set again after that plugin is loaded (app.ts imports this module after it).
import { FormatRegistry } from "@sinclair/typebox";
import { isUuid } from "../core/ids";

export function registerFormats(): void {
  FormatRegistry.Set("uuid", isUuid);
}
