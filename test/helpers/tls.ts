// A throwaway self-signed certificate (openssl) for a test's HTTPS server on 127.0.0.1.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** `name`: the certificate's subject, `altName` as openssl writes it (`IP:127.0.0.1`, `DNS:x`). */
export function selfSignedCertificate(name: string, altName: string): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), "svc-tls-"));
  try {
    Bun.spawnSync(
      [
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "key.pem",
        "-out",
        "cert.pem",
      ].concat(["-days", "1", "-subj", `/CN=${name}`, "-addext", `subjectAltName=${altName}`]),
      { cwd: dir },
    );
    return {
      key: readFileSync(join(dir, "key.pem"), "utf8"),
      cert: readFileSync(join(dir, "cert.pem"), "utf8"),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
