// GET /api/v1/integration/bank-accounts/{id}/coverage (decisions §16): which days of a period svc
// holds in full for an account the token may read.
import { Elysia, t } from "elysia";
import type { AccessPolicy } from "../auth/access-policy";
import type { TokenGuard } from "../auth/guard";
import { ACCOUNT_ERRORS, tokenRouteDoc } from "../http/docs";
import { withRequestState } from "../http/request-state";
import { tokenAuth } from "../http/token-auth";
import { type AccountCoverage, CoverageQuery, CoverageSchema } from "./account-coverage";

const doc = tokenRouteDoc("statements");

export function coverageRoutes(deps: { guard: TokenGuard; access: AccessPolicy; coverage: AccountCoverage }) {
  return new Elysia({ prefix: "/api/v1/integration/bank-accounts" })
    .use(withRequestState)
    .use(tokenAuth(deps.guard, { purpose: "integration", scope: "read_statements" }))
    .get(
      "/:bank_account_id/coverage",
      ({ principal, params, query }) => {
        const account = deps.access.account(principal, params.bank_account_id, "read_statements");
        return deps.coverage.of(account.id, query.date_from, query.date_to);
      },
      {
        params: t.Object({ bank_account_id: t.String({ format: "uuid" }) }),
        query: CoverageQuery,
        detail: doc(
          "Which days of a period are held in full (covered), only as of a time during the day (partial) or not at all (missing)",
          ["invalid request body", "validation_error", ...ACCOUNT_ERRORS],
          { 200: { description: "The account's coverage", schema: CoverageSchema } },
          "A day is covered when a ready statement (any source) holds it and was fetched after the day ended " +
            "in the business time zone; partial when the statements holding it were fetched during it; " +
            "missing otherwise. At most 366 days.",
        ),
      },
    );
}
