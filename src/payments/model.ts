// The payments contract: request and response schemas of the payment-file REST API. The service's
// view types are derived from these schemas.
import { type Static, Type } from "@sinclair/typebox";
import { t } from "elysia";
import { closed } from "../http/closed-body";

const ErrorSchema = Type.Object({ code: Type.String(), message: Type.String() });

const ItemStatusSchema = Type.Union([
  Type.Literal("draft"),
  Type.Literal("submitting"),
  Type.Literal("submitted"),
  Type.Literal("rejected"),
  Type.Literal("signed_and_paid"),
  Type.Literal("canceled"),
]);

export const ImportStatusSchema = Type.Union([
  Type.Literal("uploaded"),
  Type.Literal("submitting"),
  Type.Literal("partially_submitted"),
  Type.Literal("submitted"),
]);
export type ImportStatus = Static<typeof ImportStatusSchema>;

export const PaymentItemSchema = Type.Object({
  item_id: Type.String(),
  import_id: Type.String(),
  status: ItemStatusSchema,
  doc_number: Type.String(),
  doc_date: Type.String(),
  amount: Type.Number({ description: "Rubles" }),
  currency: Type.String(),
  purpose: Type.String(),
  payee: Type.Object({
    name: Type.String(),
    inn: Type.String(),
    kpp: Type.String(),
    account_masked: Type.String(),
    bank_bik: Type.String(),
  }),
  submitted_at: Type.Optional(Type.String()),
  error: Type.Optional(ErrorSchema),
});
export type PaymentItemView = Static<typeof PaymentItemSchema>;

export const PaymentImportSchema = Type.Object({
  import_id: Type.String(),
  bank_account_id: Type.String(),
  account_number_masked: Type.String(),
  created_at: Type.String(),
  status: ImportStatusSchema,
  items: Type.Array(PaymentItemSchema),
});
export type PaymentImportView = Static<typeof PaymentImportSchema>;

const uuid = t.String({ format: "uuid" });

export const ImportIdParams = t.Object({ import_id: uuid });
export const ItemIdParams = t.Object({ import_id: uuid, item_id: uuid });

export const SubmitBody = closed(
  t.Object({
    external_id: t.String({ description: "Idempotency key: trimmed, 1–256 characters, unique per token" }),
  }),
);

/** The upload is streamed by the route, so this schema documents it and validates nothing. */
export const UploadForm = Type.Object({
  bank_account_id: Type.String({ format: "uuid" }),
  file: Type.String({ format: "binary" }),
});
