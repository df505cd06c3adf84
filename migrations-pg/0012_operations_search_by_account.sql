-- The search's GIN index keyed by account as well: each entry of svc_search_days is
-- '<bank_account_id>|<day>/<word>' (and '…|<day>#<inn>', '…|<day>$<bucket>'), so a lookup of a
-- few days reads only the asked account's entries of those days, never another company's. The
-- functions of 0004 stay: the account is part of the "day" they are given.
CREATE INDEX "operations_search_account_days_idx" ON "operations"
  USING gin (svc_search_days("bank_account_id" || '|' || "doc_date", "counterparty_inn", "amount", "search"));
--> statement-breakpoint
DROP INDEX "operations_search_days_idx";
