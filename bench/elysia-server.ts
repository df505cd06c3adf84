// A second reference for the HTTP benchmarks: the framework's own floor. One Elysia route that
// parses the JSON body (Elysia's default parser) and answers with a prepared body; no plugins.
//   bun run bench/elysia-server.ts <body file>
// Prints {"msg":"listening","port":N} once it listens on 127.0.0.1 (a free port).
import { readFileSync } from "node:fs";
import { Elysia } from "elysia";

const bodyFile = process.argv[2];
if (!bodyFile) {
  process.stderr.write("usage: elysia-server.ts <body file>\n");
  process.exit(2);
}
const body = readFileSync(bodyFile, "utf8");

const app = new Elysia()
  .post("/api/v1/mcp", ({ body: request, set }) => {
    if (typeof request !== "object" || request === null) set.status = 400;
    set.headers["content-type"] = "application/json";
    return body;
  })
  .listen({ hostname: "127.0.0.1", port: 0 });
process.stdout.write(`${JSON.stringify({ msg: "listening", port: app.server?.port })}\n`);
process.on("SIGTERM", () => {
  void app.stop().then(() => process.exit(0));
});
