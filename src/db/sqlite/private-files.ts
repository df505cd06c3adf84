// Files svc writes hold full account numbers, bank logins sealed with a key, and the audit log:
// they are the owner's only (mode 0600), and folders svc makes for them 0700 (decisions §20).
// The CLI also sets a umask of 077 once at start; these make the modes explicit where the files
// are created, so they hold however svc is started (a test, an embedding process).
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { dirname } from "node:path";

const PRIVATE_FILE_MODE = 0o600;
const PRIVATE_DIR_MODE = 0o700;

/** Makes the folder of `path` (and missing parents) with mode 0700; one that exists is left alone. */
export function makePrivateParent(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: PRIVATE_DIR_MODE });
}

/**
 * Drops the group and other bits of a file that exists (an older svc left its database 0644);
 * a file of another owner, or none, is left as it is.
 */
export function tightenMode(path: string): void {
  try {
    const mode = statSync(path).mode & 0o777;
    if ((mode & 0o077) !== 0) chmodSync(path, mode & 0o700);
  } catch {
    // not there, or not ours to change
  }
}

/**
 * Creates `path` empty with mode 0600 when it is missing, else tightens its mode. SQLite gives a
 * database's -wal and -shm files the mode of the database file, so they follow.
 */
export function privateFile(path: string): void {
  if (existsSync(path)) {
    tightenMode(path);
    return;
  }
  try {
    closeSync(openSync(path, "wx", PRIVATE_FILE_MODE));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
}
