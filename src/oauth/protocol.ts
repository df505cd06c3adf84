// What the areas of the authorization server share: the one scope, the lifetimes of what it
// issues, the OAuth error answer (RFC 6749 §5.2) and what the server is built from.
import { randomBytes } from "node:crypto";
import type { AuditLog } from "../audit/audit-log";
import type { Clock } from "../core/clock";
import type { AnsweredByItsRoutes } from "../core/errors";
import type { BankAccountRepository, CompanyRepository } from "../db/repos/accounts";
import type { TokenRepository } from "../db/repos/tokens";
import type { OAuthRepository } from "./repository";

/** The one scope: reading statements, balances and operations through the agent tools. */
export const OAUTH_SCOPE = "statements:read";
export const ACCESS_TTL_S = 3600;
export const REQUEST_TTL_MS = 10 * 60_000;
export const CODE_TTL_MS = 60_000;
export const DAY_MS = 86_400_000;
/** A refresh token works for 30 days; each refresh issues a new one, so a grant in use lives on
 *  and one unused for 30 days ends. */
export const REFRESH_TTL_MS = 30 * DAY_MS;
/** Spent codes and refresh tokens are kept this long after use, so that a replay still revokes. */
export const SPENT_KEEP_MS = DAY_MS;
/** A client that got no grant within a day of its registration (or last document fetch) is deleted. */
export const UNUSED_CLIENT_MS = DAY_MS;

/** An OAuth error answer (RFC 6749 §5.2): `error` and a description, with its HTTP status.
 *  The OAuth routes' own error handler answers it, never the envelope. */
export class OAuthError extends Error implements AnsweredByItsRoutes {
  readonly answeredByItsRoutes = true;

  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
    this.name = "OAuthError";
  }
}

export interface OAuthDeps {
  repo: OAuthRepository;
  tokens: TokenRepository;
  companies: CompanyRepository;
  accounts: BankAccountRepository;
  audit: AuditLog;
  clock: Clock;
  publicUrl: string;
  /** Fetch client metadata documents from internal addresses (and over http): tests, labs. */
  allowInternalClients: boolean;
  fetch?: typeof fetch;
}

/** Client credentials from HTTP Basic, when the client sent them. */
export type BasicCredentials = { id: string; secret: string } | null;

export const b64url = (bytes: Buffer) => bytes.toString("base64url");
export const randomId = () => randomBytes(16).toString("hex");
