import { Type } from "@sinclair/typebox";
import { maskAccountNumber } from "../../formats/mask";
import { oneLine } from "../answer-text";
import { BankAccountSchema } from "../views";
import type { ToolDefinition } from "./registry";

const input = Type.Object({}, { additionalProperties: false });
const output = Type.Object({ bank_accounts: Type.Array(BankAccountSchema) });

export const listBankAccountsTool: ToolDefinition<typeof input, typeof output> = {
  name: "list_bank_accounts",
  title: "List bank accounts",
  description:
    "Returns the bank accounts this token may read: bank_account_id (use it in the other tools), " +
    "alias, masked account number (first and last 4 digits), bank, BIK and currency. Takes no " +
    "arguments. Accounts the token has no read permission for are not listed. Read-only.",
  inputSchema: input,
  outputSchema: output,
  text(out) {
    if (out.bank_accounts.length === 0) return "Нет счетов, которые этот токен может читать.";
    return [
      `Счета, которые этот токен может читать: ${out.bank_accounts.length}.`,
      "Название | Счёт | Банк | БИК | Валюта | bank_account_id",
      ...out.bank_accounts.map((a) =>
        [oneLine(a.alias), a.account_number_masked, a.bank, a.bik, a.currency, a.bank_account_id].join(" | "),
      ),
    ].join("\n");
  },
  handler(_args, { principal }, { access }) {
    return {
      bank_accounts: access.accessibleAccounts(principal, "read_statements").map((a) => ({
        bank_account_id: a.id,
        company_id: a.companyId,
        alias: a.alias,
        account_number_masked: maskAccountNumber(a.accountNumber),
        bank: a.bank,
        bik: a.bik,
        currency: a.currency,
      })),
    };
  },
};
