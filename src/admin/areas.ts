// The admin services, one per area; the admin API, the admin pages, `svc admin` and the demo each
// use the areas they need. Wired in container.ts.
import type { AdminAccounts } from "./accounts";
import type { AdminAudit } from "./audit";
import type { BankLogins } from "./bank-logins";
import type { AdminCompanies } from "./companies";
import type { AdminTokens } from "./tokens";

export interface AdminServices {
  companies: AdminCompanies;
  accounts: AdminAccounts;
  bankLogins: BankLogins;
  tokens: AdminTokens;
  audit: AdminAudit;
}
