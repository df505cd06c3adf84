// Tochka's consent flow (developer page "OAuth 2.0"): a client-credentials token, a consent with
// the permissions svc needs, the customer's approval on the bank's authorize page, and the code
// exchanged for an access and a refresh token.
import type { Clock } from "../../core/clock";
import { type BankConsentFlow, BankError } from "../adapter";
import { CONSENT_PERMISSIONS, OAUTH_SCOPE, type OAuthLogin, parseLogin } from "./credentials";
import type { TochkaHttp } from "./http";

function oauthLogin(credentials: unknown): OAuthLogin {
  const login = parseLogin(credentials);
  if (login?.kind !== "oauth") {
    throw new BankError("bank_credentials", "Вход через банк нужен только для доступа OAuth", {
      retryable: false,
    });
  }
  return login;
}

interface ConsentAnswer {
  Data?: { consentId?: string; Consent?: { consentId?: string }[] };
}

export function tochkaConsentFlow(http: TochkaHttp, clock: Clock): BankConsentFlow {
  return {
    appliesTo: (credentials) => parseLogin(credentials)?.kind === "oauth",

    async start(credentials, redirectUri, state) {
      const login = oauthLogin(credentials);
      const app = await http.token({
        client_id: login.client_id,
        client_secret: login.client_secret,
        grant_type: "client_credentials",
        scope: OAUTH_SCOPE,
      });
      const consent = await http.api<ConsentAnswer>(
        "production",
        app.access_token,
        "POST",
        "/consent/v1.0/consents",
        {
          Data: { permissions: [...CONSENT_PERMISSIONS] },
        },
      );
      // The document answers with one consent or with a list of them.
      const consentId = consent.Data?.consentId ?? consent.Data?.Consent?.[0]?.consentId;
      if (!consentId) throw new BankError("bank_error", "Банк не создал разрешение (consentId)");
      return http.authorizeUrl({
        client_id: login.client_id,
        response_type: "code",
        state,
        redirect_uri: redirectUri,
        scope: OAUTH_SCOPE,
        consent_id: consentId,
      });
    },

    async finish(credentials, code, redirectUri) {
      const login = oauthLogin(credentials);
      const tokens = await http.token({
        client_id: login.client_id,
        client_secret: login.client_secret,
        grant_type: "authorization_code",
        scope: OAUTH_SCOPE,
        code,
        redirect_uri: redirectUri,
      });
      if (!tokens.refresh_token) throw new BankError("bank_error", "Банк не выдал refresh-токен");
      return {
        ...login,
        access_token: tokens.access_token,
        refresh_token: tokens.refresh_token,
        expires_at_ms: clock.now().getTime() + (tokens.expires_in ?? 86_400) * 1000,
      } satisfies OAuthLogin;
    },
  };
}
