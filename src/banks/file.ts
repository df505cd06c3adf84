// Bank kind `file`: accounts whose statements arrive as the bank's own 1C files, uploaded through
// POST /api/v1/integration/statements/import or the admin pages. There is no bank to call:
// ordering answers 501 bank_not_supported, the balance is the latest imported file's, and
// payments cannot be sent from such an account.
import { type BankAdapter, BankNotSupportedError } from "./adapter";

export function createFileBankAdapter(): BankAdapter {
  const unsupported = (what: string) => () => Promise.reject(new BankNotSupportedError("file", what));
  return {
    bank: "file",
    supportsStatements: false,
    supportsBalances: false,
    requestStatement: unsupported("statement orders"),
    pollStatement: unsupported("statement orders"),
    getBalance: unsupported("balance requests"),
    submitPayment: async () => ({
      status: "rejected",
      error: {
        code: "bank_not_supported",
        message: "Со счёта, выписки которого загружаются из файлов, платежи не отправляются",
      },
    }),
  };
}
