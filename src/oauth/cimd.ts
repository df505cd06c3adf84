// Client ID Metadata Documents: a client whose id is an HTTPS URL publishes its metadata there.
// Fetching a URL a stranger names is a server-side request forgery risk, so the fetch resolves the
// host once, refuses addresses inside the network (private, loopback, link-local, unique-local)
// unless the operator allows them, and connects to exactly the address it checked (no second
// lookup a rebinding DNS server could answer differently); it follows no redirect, reads at most
// 5 KB, gives up after 5 s (headers and body together), runs at most 4 fetches at once, keeps
// what it learned for 10 minutes and a failure for 1 minute.
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { checkServerIdentity, type PeerCertificate } from "node:tls";
import { ipAllowed, parseIpRange } from "../auth/ip";
import { LIMITS, parsedUrl, redirectUrisProblem } from "./redirect-uris";

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
const FAILURE_CACHE_MS = 60_000;
const CACHE_ENTRIES = 1000;
/** Fetches in flight at once; more are refused until one ends (strangers cannot pile them up). */
export const MAX_CONCURRENT_FETCHES = 4;

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

type Lookup = (host: string) => Promise<string[]>;

const systemLookup: Lookup = async (host) =>
  (await lookup(host, { all: true }).catch(() => [])).map((a) => a.address);

type Cached = { at: number; metadata: ClientMetadata } | { at: number; error: string };

export class MetadataDocuments {
  private readonly cache = new Map<string, Cached>();
  private readonly inFlight = new Map<string, Promise<ClientMetadata>>();

  constructor(
    private readonly options: {
      allowInternal: boolean;
      now: () => number;
      fetch?: typeof fetch;
      lookup?: Lookup;
    },
  ) {}

  /** Whether a client id is a metadata document's URL (https, a path, no fragment). */
  static isDocumentUrl(clientId: string, allowInternal: boolean): boolean {
    const url = parsedUrl(clientId, LIMITS.clientId);
    if (url === null) return false;
    const secure = url.protocol === "https:" || (allowInternal && url.protocol === "http:");
    return secure && url.pathname !== "/" && url.hash === "" && url.username === "" && url.password === "";
  }

  async get(clientId: string): Promise<ClientMetadata> {
    const cached = this.cache.get(clientId);
    const age = cached ? this.options.now() - cached.at : Number.POSITIVE_INFINITY;
    if (cached && "metadata" in cached && age < CACHE_MS) return cached.metadata;
    if (cached && "error" in cached && age < FAILURE_CACHE_MS) throw new MetadataDocumentError(cached.error);
    const running = this.inFlight.get(clientId);
    if (running) return running;
    if (this.inFlight.size >= MAX_CONCURRENT_FETCHES) {
      throw new MetadataDocumentError(
        "too many client metadata documents are being fetched; try again shortly",
      );
    }
    const fetching = this.fetchDocument(clientId).then(
      (metadata) => {
        this.remember(clientId, { at: this.options.now(), metadata });
        return metadata;
      },
      (e: unknown) => {
        const message =
          e instanceof MetadataDocumentError
            ? e.message
            : "the client's metadata document could not be fetched";
        this.remember(clientId, { at: this.options.now(), error: message });
        throw new MetadataDocumentError(message);
      },
    );
    this.inFlight.set(clientId, fetching);
    try {
      return await fetching;
    } finally {
      this.inFlight.delete(clientId);
    }
  }

  private remember(clientId: string, entry: Cached): void {
    this.cache.delete(clientId);
    this.cache.set(clientId, entry);
    if (this.cache.size > CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
  }

  /** The one address the document is fetched from, checked; never looked up a second time. */
  private async address(url: URL): Promise<string> {
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const addresses = isIP(host) ? [host] : await (this.options.lookup ?? systemLookup)(host);
    if (addresses.length === 0)
      throw new MetadataDocumentError("the client's metadata host does not resolve");
    if (!this.options.allowInternal && addresses.some(isInternal)) {
      throw new MetadataDocumentError("the client's metadata document is on an internal address");
    }
    return addresses[0]!;
  }

  private async fetchDocument(clientId: string): Promise<ClientMetadata> {
    const url = new URL(clientId);
    const address = await this.address(url);
    const target = new URL(url);
    target.hostname = isIP(address) === 6 ? `[${address}]` : address;
    const serverName = url.hostname.replace(/^\[|\]$/g, "");
    // One deadline for the answer and its body: a trickling body ends the same way as silence.
    const signal = AbortSignal.timeout(TIMEOUT_MS);
    let body: Buffer;
    try {
      const res = await (this.options.fetch ?? fetch)(target, {
        redirect: "manual",
        headers: { accept: "application/json", host: url.host },
        signal,
        // The certificate must be the named host's, although the connection goes to its address.
        ...(url.protocol === "https:" && !isIP(serverName)
          ? {
              tls: {
                serverName,
                checkServerIdentity: (_: string, cert: PeerCertificate) =>
                  checkServerIdentity(serverName, cert),
              },
            }
          : {}),
      } as RequestInit);
      if (res.status !== 200) {
        await res.body?.cancel().catch(() => undefined);
        throw new MetadataDocumentError(`the client's metadata document answered ${res.status}`);
      }
      const declared = Number(res.headers.get("content-length") ?? "0");
      if (declared > MAX_BYTES) {
        await res.body?.cancel().catch(() => undefined);
        throw new MetadataDocumentError("the client's metadata document is too large");
      }
      body = await readAtMost(res, MAX_BYTES, signal);
    } catch (e) {
      if (e instanceof MetadataDocumentError) throw e;
      if (signal.aborted)
        throw new MetadataDocumentError("the client's metadata document did not arrive in time");
      throw new MetadataDocumentError("the client's metadata document could not be fetched");
    }
    let doc: Record<string, unknown>;
    try {
      doc = JSON.parse(body.toString("utf8")) as Record<string, unknown>;
    } catch {
      throw new MetadataDocumentError("the client's metadata document is not JSON");
    }
    if (typeof doc !== "object" || doc === null || doc.client_id !== clientId) {
      throw new MetadataDocumentError("the metadata document's client_id is not its own URL");
    }
    const problem = redirectUrisProblem(doc.redirect_uris);
    if (problem !== null) throw new MetadataDocumentError(`the metadata document's ${problem}`);
    const method = doc.token_endpoint_auth_method ?? "none";
    if (method !== "none") {
      throw new MetadataDocumentError(
        "a metadata-document client authenticates with PKCE only (token_endpoint_auth_method none)",
      );
    }
    const name = typeof doc.client_name === "string" ? doc.client_name.trim() : "";
    if (name.length > LIMITS.clientName) {
      throw new MetadataDocumentError(
        `the metadata document's client_name is longer than ${LIMITS.clientName}`,
      );
    }
    return {
      client_id: clientId,
      client_name: name === "" ? undefined : name,
      redirect_uris: doc.redirect_uris as string[],
      token_endpoint_auth_method: "none",
    };
  }
}

/** The body, or an error past `max` bytes (the rest is not read) or once `signal` aborts. */
async function readAtMost(res: Response, max: number, signal: AbortSignal): Promise<Buffer> {
  const reader = res.body?.getReader();
  if (!reader) return Buffer.alloc(0);
  const aborted = new Promise<never>((_, reject) => {
    const stop = () => {
      void reader.cancel().catch(() => undefined);
      reject(new MetadataDocumentError("the client's metadata document did not arrive in time"));
    };
    if (signal.aborted) stop();
    else signal.addEventListener("abort", stop, { once: true });
  });
  aborted.catch(() => undefined);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const part = await Promise.race([reader.read(), aborted]);
    if (part.done) break;
    size += part.value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      throw new MetadataDocumentError("the client's metadata document is too large");
    }
    chunks.push(part.value);
  }
  return Buffer.concat(chunks);
}
