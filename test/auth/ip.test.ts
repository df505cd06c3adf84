// lanes: sqlite
import { describe, expect, test } from "bun:test";
import { type IpRange, ipAllowed, ipInRange, normalizeIp, parseIp, parseIpRange } from "../../src/auth/ip";
import { resolveClientIp } from "../../src/http/client-ip";

const ranges = (...cidrs: string[]): IpRange[] =>
  cidrs.map((c) => {
    const r = parseIpRange(c);
    if (!r) throw new Error(`test range ${c} did not parse`);
    return r;
  });

describe("parseIp", () => {
  test("IPv4 dotted quads map into ::ffff:0:0/96", () => {
    expect(parseIp("1.2.3.4")).toBe(0xffff01020304n);
    expect(parseIp("0.0.0.0")).toBe(0xffff00000000n);
    expect(parseIp("255.255.255.255")).toBe(0xffffffffffffn);
    expect(parseIp(" 10.0.0.1 ")).toBe(0xffff0a000001n);
  });

  test("IPv4 and its IPv4-mapped IPv6 forms are the same address", () => {
    const v4 = parseIp("1.2.3.4");
    expect(parseIp("::ffff:1.2.3.4")).toBe(v4);
    expect(parseIp("::FFFF:102:304")).toBe(v4);
    expect(parseIp("0:0:0:0:0:ffff:1.2.3.4")).toBe(v4);
  });

  test("IPv6: full, compressed, bracketed, with zone", () => {
    expect(parseIp("::")).toBe(0n);
    expect(parseIp("::1")).toBe(1n);
    expect(parseIp("[::1]")).toBe(1n);
    expect(parseIp("2001:db8::1")).toBe(0x20010db8000000000000000000000001n);
    expect(parseIp("2001:0db8:0000:0000:0000:0000:0000:0001")).toBe(parseIp("2001:db8::1"));
    expect(parseIp("2001:DB8::1")).toBe(parseIp("2001:db8::1"));
    expect(parseIp("fe80::1%eth0")).toBe(parseIp("fe80::1"));
    expect(parseIp("1::")).toBe(1n << 112n);
    expect(parseIp("::1.2.3.4")).toBe(0x01020304n);
  });

  test("invalid inputs give null", () => {
    for (const bad of [
      "",
      "abc",
      "1.2.3",
      "1.2.3.4.5",
      "256.1.1.1",
      "1.2.3.-1",
      "1.2.3.4/24",
      "1.2.3.4:80",
      "1::2::3",
      ":::",
      "12345::",
      "g::1",
      "1:2:3:4:5:6:7:8:9",
      "1:2:3:4:5:6:7",
      "1:2:3:4:5:6:7::8",
      ":1:2:3:4:5:6:7",
      "::ffff:1.2.3.256",
      "1:2:3:4:5:6:7:1.2.3.4",
      "1.2.3.4::",
    ]) {
      expect({ bad, value: parseIp(bad) }).toEqual({ bad, value: null });
    }
  });
});

describe("parseIpRange", () => {
  test("IPv4 CIDR is kept in the 128-bit space (prefix + 96), host bits cleared", () => {
    expect(parseIpRange("1.2.3.0/24")).toEqual({ base: 0xffff01020300n, prefix: 120 });
    expect(parseIpRange("1.2.3.99/24")).toEqual({ base: 0xffff01020300n, prefix: 120 });
    expect(parseIpRange("1.2.3.4")).toEqual({ base: 0xffff01020304n, prefix: 128 });
    expect(parseIpRange("0.0.0.0/0")).toEqual({ base: 0xffff00000000n, prefix: 96 });
  });

  test("IPv6 CIDR", () => {
    expect(parseIpRange("2001:db8::/32")).toEqual({ base: 0x20010db8n << 96n, prefix: 32 });
    expect(parseIpRange("::/0")).toEqual({ base: 0n, prefix: 0 });
    expect(parseIpRange("::1")).toEqual({ base: 1n, prefix: 128 });
    expect(parseIpRange("::ffff:1.2.3.0/120")).toEqual(parseIpRange("1.2.3.0/24"));
  });

  test("invalid ranges give null", () => {
    for (const bad of [
      "",
      "1.2.3.4/",
      "1.2.3.4/a",
      "1.2.3.4/33",
      "1.2.3.4/-1",
      "1.2.3.4/24/1",
      "2001:db8::/129",
      "2001:db8::/1000",
      "300.0.0.0/8",
      "host.example/24",
    ]) {
      expect({ bad, value: parseIpRange(bad) }).toEqual({ bad, value: null });
    }
  });
});

describe("ipAllowed / ipInRange", () => {
  const list = ranges("1.2.3.0/24", "2001:db8::/32", "9.9.9.9");

  test("IPv4 inside and outside a CIDR", () => {
    expect(ipAllowed("1.2.3.0", list)).toBe(true);
    expect(ipAllowed("1.2.3.4", list)).toBe(true);
    expect(ipAllowed("1.2.3.255", list)).toBe(true);
    expect(ipAllowed("1.2.4.1", list)).toBe(false);
    expect(ipAllowed("1.2.2.255", list)).toBe(false);
  });

  test("::ffff:1.2.3.4 matches 1.2.3.0/24", () => {
    expect(ipAllowed("::ffff:1.2.3.4", list)).toBe(true);
    expect(ipAllowed("::ffff:1.2.4.4", list)).toBe(false);
  });

  test("single address entries match only that address", () => {
    expect(ipAllowed("9.9.9.9", list)).toBe(true);
    expect(ipAllowed("9.9.9.8", list)).toBe(false);
  });

  test("IPv6 inside and outside a CIDR", () => {
    expect(ipAllowed("2001:db8::1", list)).toBe(true);
    expect(ipAllowed("2001:db8:ffff:ffff::1", list)).toBe(true);
    expect(ipAllowed("2001:db9::1", list)).toBe(false);
    expect(ipAllowed("::1", list)).toBe(false);
  });

  test("an IPv4 range never matches a non-mapped IPv6 address with the same low bits", () => {
    expect(ipAllowed("::102:304", ranges("1.2.3.0/24"))).toBe(false);
  });

  test("0.0.0.0/0 matches every IPv4 address but no IPv6; ::/0 matches everything", () => {
    expect(ipAllowed("8.8.8.8", ranges("0.0.0.0/0"))).toBe(true);
    expect(ipAllowed("2001:db8::1", ranges("0.0.0.0/0"))).toBe(false);
    expect(ipAllowed("2001:db8::1", ranges("::/0"))).toBe(true);
    expect(ipAllowed("8.8.8.8", ranges("::/0"))).toBe(true);
  });

  test("no address, an unparseable address or an empty list is never allowed", () => {
    expect(ipAllowed(null, list)).toBe(false);
    expect(ipAllowed("garbage", list)).toBe(false);
    expect(ipAllowed("", list)).toBe(false);
    expect(ipAllowed("1.2.3.4", [])).toBe(false);
  });

  test("ipInRange works on parsed values", () => {
    const [r] = ranges("10.0.0.0/8");
    expect(ipInRange(parseIp("10.255.0.1")!, r!)).toBe(true);
    expect(ipInRange(parseIp("11.0.0.1")!, r!)).toBe(false);
  });
});

describe("normalizeIp", () => {
  test("IPv4 and IPv4-mapped addresses become dotted quads", () => {
    expect(normalizeIp("1.2.3.4")).toBe("1.2.3.4");
    expect(normalizeIp("::ffff:1.2.3.4")).toBe("1.2.3.4");
    expect(normalizeIp("::FFFF:0102:0304")).toBe("1.2.3.4");
    expect(normalizeIp(" 10.0.0.1 ")).toBe("10.0.0.1");
  });

  test("IPv6 becomes lower-case RFC 5952 text", () => {
    expect(normalizeIp("::")).toBe("::");
    expect(normalizeIp("::1")).toBe("::1");
    expect(normalizeIp("[::1]")).toBe("::1");
    expect(normalizeIp("1::")).toBe("1::");
    expect(normalizeIp("2001:0DB8:0000:0000:0000:0000:0000:0001")).toBe("2001:db8::1");
    expect(normalizeIp("fe80::1%eth0")).toBe("fe80::1");
    expect(normalizeIp("fe80:0:0:0:0:0:1:0")).toBe("fe80::1:0");
    // The longest run of zero groups is compressed; on a tie, the first.
    expect(normalizeIp("1:0:0:2:0:0:0:3")).toBe("1:0:0:2::3");
    expect(normalizeIp("2001:db8:0:0:1:0:0:1")).toBe("2001:db8::1:0:0:1");
    // A single zero group is not compressed.
    expect(normalizeIp("1:0:2:3:4:5:6:7")).toBe("1:0:2:3:4:5:6:7");
  });

  test("the normal form parses back to the same address", () => {
    for (const ip of ["1.2.3.4", "::ffff:9.8.7.6", "2001:db8::1", "1:0:0:2:0:0:0:3", "fe80::1:0", "::"]) {
      expect(parseIp(normalizeIp(ip))).toBe(parseIp(ip));
    }
  });

  test("an unparseable input is returned unchanged", () => {
    expect(normalizeIp("garbage")).toBe("garbage");
    expect(normalizeIp("1.2.3.4.5")).toBe("1.2.3.4.5");
  });
});

describe("resolveClientIp", () => {
  const proxies = ranges("10.0.0.0/8", "2001:db8:ffff::/48");

  test("without trusted proxies the socket address is the client; X-Forwarded-For is ignored", () => {
    expect(resolveClientIp("203.0.113.7", null, [])).toBe("203.0.113.7");
    expect(resolveClientIp("203.0.113.7", "1.1.1.1", [])).toBe("203.0.113.7");
    expect(resolveClientIp("10.0.0.1", "1.1.1.1", [])).toBe("10.0.0.1");
  });

  test("the socket address is normalised (::ffff: prefix removed)", () => {
    expect(resolveClientIp("::ffff:203.0.113.7", null, [])).toBe("203.0.113.7");
    expect(resolveClientIp("::ffff:203.0.113.7", null, proxies)).toBe("203.0.113.7");
  });

  test("no socket address gives null even with X-Forwarded-For", () => {
    expect(resolveClientIp(null, null, proxies)).toBeNull();
    expect(resolveClientIp(null, "1.1.1.1", proxies)).toBeNull();
  });

  test("X-Forwarded-For from an untrusted peer is ignored (no spoofing)", () => {
    expect(resolveClientIp("203.0.113.7", "1.1.1.1", proxies)).toBe("203.0.113.7");
  });

  test("a trusted peer without X-Forwarded-For is itself the client", () => {
    expect(resolveClientIp("10.0.0.1", null, proxies)).toBe("10.0.0.1");
    expect(resolveClientIp("10.0.0.1", "", proxies)).toBe("10.0.0.1");
    expect(resolveClientIp("10.0.0.1", " , ", proxies)).toBe("10.0.0.1");
  });

  test("behind a trusted proxy, the forwarded address is the client", () => {
    expect(resolveClientIp("10.0.0.1", "1.1.1.1", proxies)).toBe("1.1.1.1");
    expect(resolveClientIp("::ffff:10.0.0.1", "1.1.1.1", proxies)).toBe("1.1.1.1");
    expect(resolveClientIp("2001:db8:ffff::5", "2001:db8:1::9", proxies)).toBe("2001:db8:1::9");
  });

  test("in a chain, the right-most hop that is not a trusted proxy wins", () => {
    // A client may prepend anything; only what the trusted proxies appended counts.
    expect(resolveClientIp("10.0.0.1", "6.6.6.6, 1.1.1.1, 10.0.0.2", proxies)).toBe("1.1.1.1");
    expect(resolveClientIp("10.0.0.1", "6.6.6.6,1.1.1.1", proxies)).toBe("1.1.1.1");
    expect(resolveClientIp("10.0.0.1", "2.2.2.2, ::ffff:1.1.1.1, 10.0.0.9", proxies)).toBe("1.1.1.1");
  });

  test("a chain made only of trusted proxies gives its left-most hop", () => {
    expect(resolveClientIp("10.0.0.1", "10.0.0.3, 10.0.0.2", proxies)).toBe("10.0.0.3");
  });
});
