// A TCP proxy that adds a network's latency to a connection on one machine: every chunk read from
// either side is written to the other a fixed time later, in the order it was read. Run as its own
// process (its waits would stall anything else in the same thread):
//   bun run bench/lib/latency-proxy.ts <target host:port> <one-way delay in ms>
// Prints {"msg":"listening","port":N} once it listens on 127.0.0.1 (a free port). 0.25 ms each
// way is 0.5 ms of round trip, a database in the same data centre. To see that it adds what it
// should: `bun run bench/lib/latency-proxy.ts check postgres://… [one-way ms]` prints the round
// trip of `SELECT 1` directly and through it.
//
// Timers have millisecond steps, so a delay under a few milliseconds is kept by waiting on an
// atomic (the thread sleeps) in slices of at most SLICE_MS, between which the event loop reads
// what has arrived: a chunk is stamped at most that late, and the thread is idle but for the
// wake-ups while nothing is in flight.
import type { Socket } from "bun";
import { PgSyncClient } from "../../src/db/pg/sync-client";
import { type Listener, spawnListener } from "./proc";

const SLICE_MS = 0.05;
/** Bytes waiting for one socket to drain before the side that sends them is paused. */
const PAUSE_ABOVE = 8 * 2 ** 20;

/** One side of a proxied connection: what is written to its socket, and the other side. */
interface End {
  socket: Socket<End> | null;
  /** Chunks its socket could not take yet (or, before it connected, all of them). */
  out: Uint8Array[];
  outBytes: number;
  /** The other side's socket is paused until `out` drains. */
  holding: boolean;
  /** The other side closed: end this one once `out` is written. */
  ending: boolean;
  closed: boolean;
  peer: End;
}

interface Delivery {
  due: number;
  to: End;
  /** null: the other side closed. */
  chunk: Uint8Array | null;
}

function newPair(): [client: End, server: End] {
  const side = () => ({ socket: null, out: [], outBytes: 0, holding: false, ending: false, closed: false });
  const client = side() as unknown as End;
  const server = { ...side(), peer: client } as End;
  client.peer = server;
  return [client, server];
}

function flush(end: End): void {
  const socket = end.socket;
  if (!socket) return;
  while (end.out.length > 0) {
    const chunk = end.out[0]!;
    const written = socket.write(chunk);
    if (written < 0) {
      end.out = [];
      end.outBytes = 0;
      return;
    }
    end.outBytes -= written;
    if (written < chunk.length) {
      end.out[0] = chunk.subarray(written);
      return;
    }
    end.out.shift();
  }
  if (end.holding) {
    end.holding = false;
    end.peer.socket?.resume();
  }
  if (end.ending) socket.end();
}

function deliver(d: Delivery): void {
  const end = d.to;
  if (d.chunk === null) end.ending = true;
  else {
    end.out.push(d.chunk);
    end.outBytes += d.chunk.length;
    if (end.outBytes > PAUSE_ABOVE && !end.holding) {
      end.holding = true;
      end.peer.socket?.pause();
    }
  }
  if (end.out.length === 1 || d.chunk === null) flush(end);
}

function startProxy(target: { hostname: string; port: number }, oneWayMs: number): number {
  // In arrival order, hence in order of due time: one queue for every connection and direction.
  let queue: Delivery[] = [];
  let head = 0;
  let pumping = false;
  const sleeper = new Int32Array(new SharedArrayBuffer(4));

  const pump = () => {
    for (;;) {
      const now = performance.now();
      while (head < queue.length && queue[head]!.due <= now) deliver(queue[head++]!);
      if (head === queue.length) {
        queue = [];
        head = 0;
        pumping = false;
        return;
      }
      if (head > 1024) {
        queue = queue.slice(head);
        head = 0;
      }
      const wait = queue[head]!.due - now;
      if (wait > 2) {
        setTimeout(pump, Math.floor(wait - 1));
        return;
      }
      if (wait > SLICE_MS) {
        Atomics.wait(sleeper, 0, 0, SLICE_MS);
        setImmediate(pump);
        return;
      }
      Atomics.wait(sleeper, 0, 0, wait);
    }
  };

  const forward = (to: End, chunk: Uint8Array | null) => {
    if (oneWayMs === 0) return deliver({ due: 0, to, chunk });
    queue.push({ due: performance.now() + oneWayMs, to, chunk });
    if (!pumping) {
      pumping = true;
      setImmediate(pump);
    }
  };
  const closed = (end: End) => {
    if (end.closed) return;
    end.closed = true;
    forward(end.peer, null);
  };
  const handlers = {
    // The chunk is copied: the read buffer is not ours to keep until it is due.
    data: (socket: Socket<End>, data: Uint8Array) => forward(socket.data.peer, new Uint8Array(data)),
    drain: (socket: Socket<End>) => flush(socket.data),
    close: (socket: Socket<End>) => closed(socket.data),
    end: (socket: Socket<End>) => closed(socket.data),
    error: (socket: Socket<End>) => closed(socket.data),
  };

  const server = Bun.listen<End>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      ...handlers,
      open(socket) {
        const [client, upstream] = newPair();
        client.socket = socket;
        socket.data = client;
        socket.setNoDelay(true);
        Bun.connect<End>({ ...target, data: upstream, socket: handlers }).then(
          (connected) => {
            connected.setNoDelay(true);
            upstream.socket = connected;
            flush(upstream);
          },
          () => socket.end(),
        );
      },
    },
  });
  return server.port;
}

/** The proxy in its own process, in front of the PostgreSQL of `databaseUrl`; `url` is the same
 *  database through it. */
export async function startLatencyProxy(
  databaseUrl: string,
  oneWayMs: number,
): Promise<Listener & { databaseUrl: string }> {
  const target = new URL(databaseUrl);
  const proxy = await spawnListener([
    process.execPath,
    "run",
    import.meta.path,
    target.host,
    String(oneWayMs),
  ]);
  const through = new URL(databaseUrl);
  through.host = new URL(proxy.url).host;
  return { ...proxy, databaseUrl: through.toString() };
}

/** Round trips of `SELECT 1` through the synchronous client the stores use: median and p99 in ms. */
export function selectOneRoundTrip(databaseUrl: string, runs = 300): { p50_ms: number; p99_ms: number } {
  const client = new PgSyncClient(databaseUrl, { timeoutMs: 10_000 });
  try {
    for (let i = 0; i < 30; i++) client.query("SELECT 1");
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      client.query("SELECT 1");
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    const at = (q: number) => Math.round(times[Math.ceil(q * times.length) - 1]! * 1000) / 1000;
    return { p50_ms: at(0.5), p99_ms: at(0.99) };
  } finally {
    client.close();
  }
}

async function check(databaseUrl: string, oneWayMs: number): Promise<void> {
  const proxy = await startLatencyProxy(databaseUrl, oneWayMs);
  try {
    const direct = selectOneRoundTrip(databaseUrl);
    const through = selectOneRoundTrip(proxy.databaseUrl);
    console.log(
      `SELECT 1 p50 / p99: ${direct.p50_ms} / ${direct.p99_ms} ms directly, ` +
        `${through.p50_ms} / ${through.p99_ms} ms through ${oneWayMs} ms each way`,
    );
  } finally {
    await proxy.stop();
  }
}

if (import.meta.main && process.argv[2] === "check") {
  await check(process.argv[3] ?? "", Number(process.argv[4] ?? 0.25));
} else if (import.meta.main) {
  const [hostPort, delay] = process.argv.slice(2);
  const oneWayMs = Number(delay);
  const [hostname, port] = (hostPort ?? "").split(":");
  if (!hostname || !port || !Number.isFinite(oneWayMs) || oneWayMs < 0) {
    process.stderr.write("usage: latency-proxy.ts <target host:port> <one-way delay in ms>\n");
    process.exit(2);
  }
  const listening = startProxy({ hostname, port: Number(port) }, oneWayMs);
  process.stdout.write(`${JSON.stringify({ msg: "listening", port: listening })}\n`);
  process.on("SIGTERM", () => process.exit(0));
}
