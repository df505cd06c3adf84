// The sync contract (decisions §16): the settings body of PUT …/sync and the object both calls
// answer.
import { type Static, Type } from "@sinclair/typebox";
import { t } from "elysia";

export const SyncSettingsBody = t.Object({
  enabled: t.Boolean(),
  since: t.Optional(
    t.String({ description: "YYYY-MM-DD, not in the future, at most 3 years back; default: 90 days ago" }),
  ),
  interval_minutes: t.Optional(t.Integer({ minimum: 5, maximum: 1440, description: "default 60" })),
});
export type SyncSettingsInput = Static<typeof SyncSettingsBody>;

export const SyncSchema = Type.Object({
  bank_account_id: Type.String(),
  enabled: Type.Boolean(),
  since: Type.String(),
  interval_minutes: Type.Integer(),
  last_run_at: Type.Union([Type.String(), Type.Null()]),
  next_run_at: Type.Union([Type.String(), Type.Null()], { description: "null while sync is off" }),
  last_error: Type.Union([Type.String(), Type.Null()], {
    description: "The bank's refusal of the latest failed piece; null once a later run succeeds",
  }),
});
export type SyncView = Static<typeof SyncSchema>;
