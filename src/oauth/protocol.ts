// What the areas of the authorization server share: the one scope, the lifetimes of what it
// issues, the OAuth error answer (RFC 6749 §5.2) and what the server is built from.
import { randomBytes } from "node:crypto";
import type { AuditLog } from "../audit/audit-log";
import type { Clock } from "../core/clock";
import type { AnswersItself } from "../core/errors";
import type { BankAccountRepository, CompanyRepository } from "../db/repos/accounts";
import type { TokenRepository } from "../db/repos/tokens";
import type { OAuthRepository } from "./repository";

/** The one scope: reading statements, balances and operations through the agent tools. */
export const OAUTH_SCOPE = "statements:read";
/** The display prefix of a grant's agent token until its code is exchanged (a placeholder's). */
export const NOT_EXCHANGED_PREFIX = "oauth";
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

export const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" };

/** An OAuth error answer (RFC 6749 §5.2): `error` and a description, with its HTTP status; it
 *  carries its own answer, never the envelope. */
export class OAuthError extends Error implements AnswersItself {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
    this.name = "OAuthError";
  }

  /** The answer; a client that sent Basic credentials is challenged on a 401. */
  answer(request?: Request): Response {
    const headers: Record<string, string> = { ...NO_STORE };
    if (this.status === 401 && request && basicCredentials(request) !== null) {
      headers["www-authenticate"] = 'Basic realm="svc"';
    }
    return Response.json(
      { error: this.error, error_description: this.description },
      { status: this.status, headers },
    );
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

/** HTTP Basic client credentials (RFC 6749 §2.3.1: both parts form-urlencoded). */
export function basicCredentials(request: Request): BasicCredentials {
  const header = request.headers.get("authorization");
  if (!header?.startsWith("Basic ")) return null;
  const decoded = Buffer.from(header.slice(6), "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return null;
  try {
    return {
      id: decodeURIComponent(decoded.slice(0, colon)),
      secret: decodeURIComponent(decoded.slice(colon + 1)),
    };
  } catch {
    return null;
  }
}

export const b64url = (bytes: Buffer) => bytes.toString("base64url");
export const randomId = () => randomBytes(16).toString("hex");
