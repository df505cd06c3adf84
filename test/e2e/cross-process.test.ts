// The server keeps tokens, grants and statement rows in memory; `svc admin` works on the same
// database file from another process. What it commits counts from the server's next request on.
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import {
  type RunningProcess,
  removeTempDirs,
  seedToken,
  startServe,
  svcAdmin,
  tempDir,
} from "../helpers/server";

const servers: RunningProcess[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop("SIGKILL");
  removeTempDirs();
});
/** A harness limit for a test that starts processes, not a performance assertion. */
const E2E_TIMEOUT_MS = 60_000;

// With the rows kept in memory (the default) and without (SVC_ROW_CACHE=off).
describe.each(["on", "off"])(
  "svc admin in another process, against a running server (row cache %s)",
  (rowCache) => {
    test(
      "a token revoked by `svc admin token revoke` fails from the server's next request on",
      async () => {
        const dbPath = join(tempDir(), "svc.db");
        const server = await startServe({ dbPath, env: { SVC_ROW_CACHE: rowCache } });
        servers.push(server);
        const seeded = await seedToken(server);
        const poll = () =>
          fetch(`${server.url}/api/v1/integration/statements`, {
            headers: { authorization: `Bearer ${seeded.token}` },
          });
        // Served from the server's memory by now.
        for (let i = 0; i < 3; i++) expect((await poll()).status).toBe(200);

        await svcAdmin(dbPath, ["token", "revoke", seeded.tokenId]);

        const refused = await poll();
        expect(refused.status).toBe(401);
        expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("invalid_token");
      },
      E2E_TIMEOUT_MS,
    );
  },
);
