// The client address: the socket peer, unless that peer is a trusted proxy, in which case the
// right-most X-Forwarded-For hop that is not itself a trusted proxy.
import { type IpRange, ipAllowed, normalizeIp } from "../auth/ip";

export function resolveClientIp(
  socketIp: string | null,
  forwardedFor: string | null,
  trustedProxies: readonly IpRange[],
): string | null {
  if (socketIp === null) return null;
  let ip = normalizeIp(socketIp);
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
