// The machine's floor for the HTTP benchmarks: a bare Bun.serve that answers every request with a
// prepared body (no routing, no parsing, no database). Run as its own process:
//   bun run bench/raw-server.ts <body file> <content type>
// Prints {"msg":"listening","port":N} once it listens on 127.0.0.1 (a free port).
import { readFileSync } from "node:fs";

const [bodyFile, contentType = "application/json"] = process.argv.slice(2);
if (!bodyFile) {
  process.stderr.write("usage: raw-server.ts <body file> [content type]\n");
  process.exit(2);
}
const body = readFileSync(bodyFile);
const headers = { "content-type": contentType };

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: () => new Response(body, { headers }),
});
process.stdout.write(`${JSON.stringify({ msg: "listening", port: server.port })}\n`);
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
