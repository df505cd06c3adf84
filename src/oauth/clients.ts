// The authorization server's clients: registered (Dynamic Client Registration, RFC 7591) or known
// by their metadata document (fetched and remembered), authenticated at the token and revocation
// endpoints, and listed for the operator.
import { randomBytes } from "node:crypto";
import { hashToken, secretEquals } from "../auth/tokens";
import { MetadataDocuments } from "./cimd";
import { type PageQuery, pageArgs, pageOf } from "./paging";
import {
  type BasicCredentials,
  b64url,
  OAUTH_SCOPE,
  type OAuthDeps,
  OAuthError,
  randomId,
  UNUSED_CLIENT_MS,
} from "./protocol";
import { LIMITS, redirectUrisProblem } from "./redirect-uris";
import type { ClientRow } from "./repository";

/** Registrations within the sweep's day at most: past it, new ones wait (a flood from many
 *  addresses cannot fill the disk; clients already registered keep working). */
const MAX_CLIENTS_PER_DAY = 10_000;

export class OAuthClients {
  private readonly documents: MetadataDocuments;

  constructor(private readonly deps: OAuthDeps) {
    this.documents = new MetadataDocuments({
      allowInternal: deps.allowInternalClients,
      now: () => deps.clock.now().getTime(),
      fetch: deps.fetch,
    });
  }

  /** Dynamic Client Registration (RFC 7591). */
  register(body: unknown): Record<string, unknown> {
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw new OAuthError("invalid_client_metadata", "the registration must be a JSON object");
    }
    const b = body as Record<string, unknown>;
    const uris = b.redirect_uris;
    const problem = redirectUrisProblem(uris);
    if (problem !== null) throw new OAuthError("invalid_redirect_uri", problem);
    const method = b.token_endpoint_auth_method ?? "none";
    if (method !== "none" && method !== "client_secret_post" && method !== "client_secret_basic") {
      throw new OAuthError(
        "invalid_client_metadata",
        "token_endpoint_auth_method: none, client_secret_post or client_secret_basic",
      );
    }
    const grantTypes = (b.grant_types as unknown[] | undefined) ?? ["authorization_code", "refresh_token"];
    if (
      !Array.isArray(grantTypes) ||
      grantTypes.some((g) => g !== "authorization_code" && g !== "refresh_token")
    ) {
      throw new OAuthError("invalid_client_metadata", "grant_types: authorization_code, refresh_token");
    }
    if (b.client_name !== undefined && typeof b.client_name !== "string") {
      throw new OAuthError("invalid_client_metadata", "client_name: a string");
    }
    if (typeof b.client_name === "string" && b.client_name.trim().length > LIMITS.clientName) {
      throw new OAuthError("invalid_client_metadata", `client_name: at most ${LIMITS.clientName} characters`);
    }
    const name =
      typeof b.client_name === "string" && b.client_name.trim() !== ""
        ? b.client_name.trim()
        : "unnamed client";
    const nowMs = this.deps.clock.now().getTime();
    const since = new Date(nowMs - UNUSED_CLIENT_MS).toISOString();
    if (this.deps.repo.clientsSince(since, MAX_CLIENTS_PER_DAY) >= MAX_CLIENTS_PER_DAY) {
      throw new OAuthError(
        "temporarily_unavailable",
        "too many clients were registered in the last day; try again later",
        503,
      );
    }
    const secret = method === "none" ? null : b64url(randomBytes(32));
    const row: ClientRow = {
      id: `svc-client-${randomId()}`,
      kind: "registered",
      name,
      redirectUris: uris as string[],
      tokenEndpointAuthMethod: method,
      secretHash: secret === null ? null : hashToken(secret),
      createdAt: this.deps.clock.now().toISOString(),
    };
    this.deps.repo.upsertClient(row);
    return {
      client_id: row.id,
      client_id_issued_at: Math.floor(this.deps.clock.now().getTime() / 1000),
      ...(secret === null ? {} : { client_secret: secret, client_secret_expires_at: 0 }),
      client_name: name,
      redirect_uris: row.redirectUris,
      token_endpoint_auth_method: method,
      grant_types: grantTypes,
      response_types: ["code"],
      scope: OAUTH_SCOPE,
    };
  }

  /** A registered client, or one known by its metadata document (fetched and remembered). */
  async resolve(clientId: string): Promise<ClientRow | null> {
    const known = this.deps.repo.client(clientId);
    if (known?.kind === "registered") return known;
    if (!MetadataDocuments.isDocumentUrl(clientId, this.deps.allowInternalClients)) return null;
    const doc = await this.documents.get(clientId);
    const row: ClientRow = {
      id: clientId,
      kind: "metadata_document",
      name: doc.client_name ?? new URL(clientId).hostname,
      redirectUris: doc.redirect_uris,
      tokenEndpointAuthMethod: "none",
      secretHash: null,
      createdAt: known?.createdAt ?? this.deps.clock.now().toISOString(),
    };
    this.deps.repo.upsertClient(row);
    return row;
  }

  /** The client of a token request: its id (form or Basic), its secret when it has one. */
  authenticate(form: Record<string, string>, basic: BasicCredentials): ClientRow {
    const clientId = basic?.id ?? form.client_id;
    if (!clientId) throw new OAuthError("invalid_client", "client_id is missing", 401);
    const client = this.deps.repo.client(clientId);
    if (!client) throw new OAuthError("invalid_client", "unknown client", 401);
    if (client.secretHash !== null) {
      const secret = basic?.secret ?? form.client_secret;
      if (!secret || !secretEquals(hashToken(secret), client.secretHash)) {
        throw new OAuthError("invalid_client", "client authentication failed", 401);
      }
    }
    return client;
  }

  /** The operator's list, newest first. */
  list(q: PageQuery = {}) {
    const { limit, after } = pageArgs(q);
    const rows = this.deps.repo.clients(limit + 1, after);
    return pageOf(
      rows,
      limit,
      (c) => ({ key: c.createdAt, id: c.id }),
      "clients",
      (c) => ({
        client_id: c.id,
        kind: c.kind,
        name: c.name,
        redirect_uris: c.redirectUris,
        created_at: c.createdAt,
      }),
    );
  }
}
