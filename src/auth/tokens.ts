// Token values: "svc_live_" or "svc_test_" followed by 40 base62 characters. Only the SHA-256
// of a value is stored; the raw value exists once, in the creation response.
import { createHash, timingSafeEqual } from "node:crypto";
import { secureRandomBytes } from "../core/clock";

export type TokenMode = "live" | "test";
export type TokenPurpose = "integration" | "mcp";

const TOKEN_RE = /^svc_(live|test)_[0-9A-Za-z]{40}$/;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const TOKEN_PREFIX_LENGTH = 13;

export function isWellFormedToken(value: string): boolean {
  return TOKEN_RE.test(value);
}

export function generateToken(mode: TokenMode): string {
  let body = "";
  // Rejection sampling keeps every character equally likely.
  while (body.length < 40) {
    for (const byte of secureRandomBytes(64)) {
      if (byte < 248 && body.length < 40) body += BASE62[byte % 62];
    }
  }
  return `svc_${mode}_${body}`;
}

export function hashToken(value: string): string {
  // Bun's one-shot SHA-256: the same digest as node:crypto's, without a hasher object per request.
  return Bun.SHA256.hash(value, "hex");
}

export function tokenDisplayPrefix(value: string): string {
  return value.slice(0, TOKEN_PREFIX_LENGTH);
}

/** Extracts the bearer value; null when the header is missing or not a Bearer credential. */
export function bearerValue(authorization: string | null): string | null {
  if (!authorization) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return match?.[1] ?? null;
}

/** Constant-time comparison that does not leak the expected length through timing either. */
export function secretEquals(presented: string, expected: string): boolean {
  const a = createHash("sha256").update(presented).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}
