// The client address: the socket peer, unless that peer is a trusted proxy, in which case the
// right-most X-Forwarded-For hop that is not itself a trusted proxy.
import { Elysia } from "elysia";
import { type IpRange, ipAllowed, normalizeIp } from "../auth/ip";
import { type RequestState, withRequestState } from "./request-state";

/** The socket peer address; under app.handle() (tests) there is none. */
export type SocketIp = (
  request: Request,
  server: { requestIP?(r: Request): { address: string } | null } | null,
) => string | null;

/** Fills `requestState.clientIp` (after the request id plugin has made the state). */
export function clientIpPlugin(deps: { trustedProxies: IpRange[]; socketIp: SocketIp }) {
  return new Elysia({ name: "client-ip" }).use(withRequestState).onRequest((ctx) => {
    const state = (ctx as { requestState: RequestState }).requestState;
    state.clientIp = resolveClientIp(
      deps.socketIp(ctx.request, ctx.server as never),
      ctx.request.headers.get("x-forwarded-for"),
      deps.trustedProxies,
    );
  });
}

export function resolveClientIp(
  socketIp: string | null,
  forwardedFor: string | null,
  trustedProxies: readonly IpRange[],
): string | null {
  if (socketIp === null) return null;
  let ip = canonicalPeer(socketIp);
  if (!forwardedFor || trustedProxies.length === 0 || !ipAllowed(ip, trustedProxies)) return ip;
  const hops = forwardedFor
    .split(",")
    .map((h) => h.trim())
    .filter((h) => h.length > 0);
  for (let i = hops.length - 1; i >= 0; i--) {
    ip = normalizeIp(hops[i]!);
    if (!ipAllowed(ip, trustedProxies)) return ip;
  }
  return ip;
}

// A handful of peers (clients or the proxy in front) send almost every request: their canonical
// text is kept instead of parsed again (BigInt arithmetic, about a microsecond per request).
const MAX_PEERS = 1024;
const canonicalPeers = new Map<string, string>();

function canonicalPeer(socketIp: string): string {
  let text = canonicalPeers.get(socketIp);
  if (text === undefined) {
    if (canonicalPeers.size >= MAX_PEERS) canonicalPeers.clear();
    text = normalizeIp(socketIp);
    canonicalPeers.set(socketIp, text);
  }
  return text;
}
