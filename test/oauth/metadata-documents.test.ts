// lanes: sqlite postgres
// Client metadata documents fetched for strangers: their redirect URIs pass the same check as a
// registration's; a trickling body ends as a refusal page, not a 500; the host is resolved once and
// the fetch goes to the address that was checked; fetches at once are capped and failures are
// remembered for a minute. Documents are served on 127.0.0.1 (SVC_OAUTH_ALLOW_INTERNAL_CLIENTS).
import { afterEach, describe, expect, test } from "bun:test";
import { MAX_CONCURRENT_FETCHES, MetadataDocuments } from "../../src/oauth/cimd";
import { selfSignedCertificate } from "../helpers/tls";
import { authorizeUrl, oauthApp, pkce, REDIRECT, rowCount } from "./support";

const servers: ReturnType<typeof Bun.serve>[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.stop(true);
});

function serve(fetch: (req: Request) => Response | Promise<Response>) {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch });
  servers.push(server);
  return server;
}

const allowed = () => oauthApp({ SVC_OAUTH_ALLOW_INTERNAL_CLIENTS: "on" });

function authorizeWith(t: ReturnType<typeof allowed>["t"], clientId: string) {
  return t.request("GET", authorizeUrl({ client_id: clientId, code_challenge: pkce().challenge }));
}

describe("client metadata documents", () => {
  test("redirect URIs a registration would refuse are refused in a document too; nothing is stored", async () => {
    const bad = [
      "javascript:alert(1)",
      "data:text/html,hi",
      "http://evil.example/cb",
      "https://app.example/cb#x",
    ];
    const doc = serve((req) => {
      const i = Number(new URL(req.url).pathname.replace(/\D/g, ""));
      return Response.json({ client_id: req.url, client_name: "Doc", redirect_uris: [REDIRECT, bad[i]] });
    });
    const { t } = allowed();
    for (let i = 0; i < bad.length; i++) {
      const res = await authorizeWith(t, `http://127.0.0.1:${doc.port}/client${i}.json`);
      expect(res.status).toBe(400);
      expect(res.headers.get("location")).toBeNull();
      expect(await res.text()).toContain("not an allowed redirect URI");
    }
    expect(rowCount(t, "oauth_clients")).toBe(0);
    expect(rowCount(t, "oauth_requests")).toBe(0);
  });

  test("a body that trickles: the refusal page once the deadline passes, not a 500", async () => {
    let chunks = 0;
    const doc = serve(
      () =>
        new Response(
          new ReadableStream({
            async pull(controller) {
              // At most 60 bytes, one every 250 ms: longer than the 5 s the fetch is given.
              if (chunks++ >= 60) return controller.close();
              await Bun.sleep(250);
              controller.enqueue(new TextEncoder().encode(" "));
            },
          }),
          { headers: { "content-type": "application/json" } },
        ),
    );
    const { t } = allowed();
    const res = await authorizeWith(t, `http://127.0.0.1:${doc.port}/client.json`);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("did not arrive in time");
    expect(rowCount(t, "oauth_requests")).toBe(0);
  }, 20_000);

  test("fetches at once are capped; a failure is remembered, not fetched again at once", async () => {
    let seen = 0;
    const held: (() => void)[] = [];
    const doc = serve((req) => {
      seen++;
      if (new URL(req.url).pathname === "/missing.json") return new Response("no", { status: 404 });
      return new Promise<Response>((resolve) =>
        held.push(() => resolve(Response.json({ client_id: req.url, redirect_uris: [REDIRECT] }))),
      );
    });
    const { t } = allowed();
    const base = `http://127.0.0.1:${doc.port}`;
    const waiting = Array.from({ length: MAX_CONCURRENT_FETCHES }, (_, i) =>
      authorizeWith(t, `${base}/c${i}.json`),
    );
    for (let i = 0; i < 200 && held.length < MAX_CONCURRENT_FETCHES; i++) await Bun.sleep(10);
    expect(held.length).toBe(MAX_CONCURRENT_FETCHES);
    const refused = await authorizeWith(t, `${base}/one-more.json`);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("too many client metadata documents");
    for (const release of held) release();
    expect((await Promise.all(waiting)).map((r) => r.status)).toEqual(
      Array(MAX_CONCURRENT_FETCHES).fill(302),
    );
    expect(seen).toBe(MAX_CONCURRENT_FETCHES);
    for (let i = 0; i < 3; i++) expect((await authorizeWith(t, `${base}/missing.json`)).status).toBe(400);
    expect(seen).toBe(MAX_CONCURRENT_FETCHES + 1);
  });

  test("the host is resolved once, and the fetch goes to the address that was checked", async () => {
    const lookups: string[] = [];
    const fetched: { url: string; host: string | null; serverName?: string }[] = [];
    const answers = [["93.184.216.34"], ["127.0.0.1"]];
    const documents = new MetadataDocuments({
      allowInternal: false,
      now: () => 0,
      lookup: async (host) => {
        lookups.push(host);
        return answers.shift() ?? [];
      },
      fetch: (async (url: URL, init: RequestInit & { tls?: { serverName?: string } }) => {
        fetched.push({
          url: String(url),
          host: new Headers(init.headers).get("host"),
          serverName: init.tls?.serverName,
        });
        return Response.json({ client_id: "https://agent.example/client.json", redirect_uris: [REDIRECT] });
      }) as unknown as typeof fetch,
    });
    const doc = await documents.get("https://agent.example/client.json");
    expect(doc.redirect_uris).toEqual([REDIRECT]);
    expect(lookups).toEqual(["agent.example"]);
    expect(fetched).toEqual([
      { url: "https://93.184.216.34/client.json", host: "agent.example", serverName: "agent.example" },
    ]);
  });

  test("over TLS the fetch goes to the checked address and the certificate must be the name's", async () => {
    const { key, cert } = selfSignedCertificate("agent.test", "DNS:agent.test");
    const doc = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: { key, cert },
      fetch: (req) => Response.json({ client_id: req.url, redirect_uris: [REDIRECT] }),
    });
    servers.push(doc);
    const documents = new MetadataDocuments({
      allowInternal: true,
      now: () => 0,
      // Both names "resolve" to the server; its certificate names agent.test only.
      lookup: async () => ["127.0.0.1"],
      // Trust the test's certificate, and change nothing else of the request.
      fetch: ((url: URL, init: RequestInit & { tls?: object }) =>
        fetch(url, { ...init, tls: { ...init.tls, ca: cert } } as RequestInit)) as unknown as typeof fetch,
    });
    const good = `https://agent.test:${doc.port}/client.json`;
    expect((await documents.get(good)).client_id).toBe(good);
    await expect(documents.get(`https://other.test:${doc.port}/client.json`)).rejects.toThrow(
      "could not be fetched",
    );
  });
});
