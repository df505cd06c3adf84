// Bank credentials at rest: AES-256-GCM under SVC_SECRET_KEY. Layout: iv (12) | tag (16) | data.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { dirname, join } from "node:path";

/** The key file a database uses when SVC_SECRET_KEY is unset. */
export function secretKeyFileOf(dbPath: string): string {
  return join(dirname(dbPath), "secret.key");
}

export class SecretBox {
  constructor(private readonly key: Uint8Array) {
    if (key.length !== 32) throw new Error("secret key must be 32 bytes");
  }

  seal(plaintext: string): Buffer {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const data = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), data]);
  }

  open(sealed: Uint8Array): string {
    const buf = Buffer.from(sealed);
    const decipher = createDecipheriv("aes-256-gcm", this.key, buf.subarray(0, 12));
    decipher.setAuthTag(buf.subarray(12, 28));
    return Buffer.concat([decipher.update(buf.subarray(28)), decipher.final()]).toString("utf8");
  }
}
