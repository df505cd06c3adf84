import { Type } from "@sinclair/typebox";
import { BalanceSchema } from "../../statements/model";
import { balanceView } from "../../statements/views";
import { rubles } from "../answer-text";
import { BankAccountId } from "./common";
import type { ToolDefinition } from "./registry";

const input = Type.Object({ bank_account_id: BankAccountId }, { additionalProperties: false });

export const getBalanceTool: ToolDefinition<typeof input, typeof BalanceSchema> = {
  name: "get_balance",
  title: "Get cached account balance",
  description:
    "Returns the last cached balance of one bank account: balance in rubles, currency, as_of " +
    "(when the bank reported it) and stale (true when older than the service's freshness limit, " +
    "or when no balance is cached, in which case balance and as_of are null). Never calls the bank " +
    "and cannot refresh the balance. Errors: not_found, forbidden_company, forbidden_account.",
  inputSchema: input,
  outputSchema: BalanceSchema,
  text(out) {
    if (out.balance === null || out.as_of === null) {
      return `Остаток по счёту ${out.bank_account_id} неизвестен: банк его ещё не сообщал.`;
    }
    const stale = out.stale ? " Он устарел: свежего остатка у svc нет, скажите об этом пользователю." : "";
    return `Остаток по счёту ${out.bank_account_id}: ${rubles(out.balance)} ${out.currency} на ${out.as_of}.${stale}`;
  },
  handler(args, { principal }, { access, read, clock, balanceStaleSeconds }) {
    const account = access.account(principal, args.bank_account_id, "read_statements");
    return balanceView(account, read.balance(account.id), clock.now(), balanceStaleSeconds);
  },
};
