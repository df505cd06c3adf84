// lanes: sqlite
// The server keeps tokens, grants and statement rows in memory; `svc admin` works on the same
// database file from another process. What it commits counts from the server's next request on,
// with the row cache on and off (SVC_ROW_CACHE).
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import {
  BUN,
  ROOT,
  type RunningProcess,
  removeTempDirs,
  seedToken,
  sqlInAnotherProcess,
  startServe,
  tempDir,
} from "../helpers/server";

const servers: RunningProcess[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop("SIGKILL");
  removeTempDirs();
});
/** A harness limit for a test that starts processes, not a performance assertion. */
const E2E_TIMEOUT_MS = 60_000;

async function svcAdmin(dbPath: string, args: string[]): Promise<string> {
  const proc = Bun.spawn([BUN, "run", join(ROOT, "cli/svc.ts"), "admin", ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", SVC_DB_PATH: dbPath },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) throw new Error(`svc admin ${args.join(" ")}: exit ${code}: ${err}`);
  return out;
}

describe.each(["on", "off"])("another process, against a running server, SVC_ROW_CACHE=%s", (rowCache) => {
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

  test(
    "grants changed by another process show in the server's admin API from its next request on",
    async () => {
      const dbPath = join(tempDir(), "svc.db");
      const server = await startServe({ dbPath, env: { SVC_ROW_CACHE: rowCache } });
      servers.push(server);
      const seeded = await seedToken(server);
      const grantsShown = async () => {
        const listed = (await (await server.admin("GET", "/tokens")).json()) as {
          tokens: { api_token_id: string; accounts: { allow_read_statements: boolean }[] }[];
        };
        return listed.tokens.find((t) => t.api_token_id === seeded.tokenId)?.accounts;
      };
      // The token's grants are read (and kept) by its own request and by the admin view.
      expect(
        (
          await fetch(`${server.url}/api/v1/integration/statements`, {
            headers: { authorization: `Bearer ${seeded.token}` },
          })
        ).status,
      ).toBe(200);
      expect(await grantsShown()).toMatchObject([{ allow_read_statements: true }]);

      sqlInAnotherProcess(
        dbPath,
        `UPDATE token_accounts SET allow_read_statements = 0 WHERE token_id = '${seeded.tokenId}'`,
      );

      expect(await grantsShown()).toMatchObject([{ allow_read_statements: false }]);
    },
    E2E_TIMEOUT_MS,
  );
});
