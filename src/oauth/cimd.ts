// Client ID Metadata Documents: a client whose id is an HTTPS URL publishes its metadata there.
// Fetching a URL a stranger names is a server-side request forgery risk, so the fetch refuses
// addresses inside the network (private, loopback, link-local, unique-local) unless the operator
// allows them, follows no redirect, reads at most 5 KB, gives up after 5 s, and keeps what it
// learned for 10 minutes.
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { ipAllowed, parseIpRange } from "../auth/ip";

export interface ClientMetadata {
  client_id: string;
  client_name?: string;
  redirect_uris: string[];
  token_endpoint_auth_method?: string;
}

export class MetadataDocumentError extends Error {}

const MAX_BYTES = 5 * 1024;
const TIMEOUT_MS = 5_000;
const CACHE_MS = 10 * 60_000;

const INTERNAL = [
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.168.0.0/16",
  "::1/128",
  "::/128",
  "fc00::/7",
  "fe80::/10",
].map((cidr) => parseIpRange(cidr)!);

function isInternal(address: string): boolean {
  return ipAllowed(address, INTERNAL);
}

export class MetadataDocuments {
  private readonly cache = new Map<string, { at: number; metadata: ClientMetadata }>();

  constructor(
    private readonly options: { allowInternal: boolean; now: () => number; fetch?: typeof fetch },
  ) {}

  /** Whether a client id is a metadata document's URL (https, a path, no fragment). */
  static isDocumentUrl(clientId: string, allowInternal: boolean): boolean {
    let url: URL;
    try {
      url = new URL(clientId);
    } catch {
      return false;
    }
    const secure = url.protocol === "https:" || (allowInternal && url.protocol === "http:");
    return secure && url.pathname !== "/" && url.hash === "" && url.username === "" && url.password === "";
  }

  async get(clientId: string): Promise<ClientMetadata> {
    const cached = this.cache.get(clientId);
    if (cached && this.options.now() - cached.at < CACHE_MS) return cached.metadata;
    const metadata = await this.fetchDocument(clientId);
    this.cache.set(clientId, { at: this.options.now(), metadata });
    if (this.cache.size > 1000) this.cache.delete(this.cache.keys().next().value!);
    return metadata;
  }

  private async fetchDocument(clientId: string): Promise<ClientMetadata> {
    const url = new URL(clientId);
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const addresses = isIP(host)
      ? [host]
      : (await lookup(host, { all: true }).catch(() => [])).map((a) => a.address);
    if (addresses.length === 0)
      throw new MetadataDocumentError("the client's metadata host does not resolve");
    if (!this.options.allowInternal && addresses.some(isInternal)) {
      throw new MetadataDocumentError("the client's metadata document is on an internal address");
    }
    let res: Response;
    try {
      res = await (this.options.fetch ?? fetch)(url, {
        redirect: "manual",
        headers: { accept: "application/json" },
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch {
      throw new MetadataDocumentError("the client's metadata document could not be fetched");
    }
    if (res.status !== 200)
      throw new MetadataDocumentError(`the client's metadata document answered ${res.status}`);
    const declared = Number(res.headers.get("content-length") ?? "0");
    if (declared > MAX_BYTES) throw new MetadataDocumentError("the client's metadata document is too large");
    const reader = res.body?.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const part = reader ? await reader.read() : { done: true, value: undefined };
      if (part.done) break;
      size += part.value.byteLength;
      if (size > MAX_BYTES) {
        await reader?.cancel();
        throw new MetadataDocumentError("the client's metadata document is too large");
      }
      chunks.push(part.value);
    }
    let doc: Record<string, unknown>;
    try {
      doc = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
    } catch {
      throw new MetadataDocumentError("the client's metadata document is not JSON");
    }
    if (doc.client_id !== clientId) {
      throw new MetadataDocumentError("the metadata document's client_id is not its own URL");
    }
    const redirects = doc.redirect_uris;
    if (
      !Array.isArray(redirects) ||
      redirects.length === 0 ||
      !redirects.every((r) => typeof r === "string")
    ) {
      throw new MetadataDocumentError("the metadata document lists no redirect_uris");
    }
    const method = doc.token_endpoint_auth_method ?? "none";
    if (method !== "none") {
      throw new MetadataDocumentError(
        "a metadata-document client authenticates with PKCE only (token_endpoint_auth_method none)",
      );
    }
    return {
      client_id: clientId,
      client_name: typeof doc.client_name === "string" ? doc.client_name.slice(0, 200) : undefined,
      redirect_uris: redirects as string[],
      token_endpoint_auth_method: "none",
    };
  }
}
