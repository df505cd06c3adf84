// The WAL-index header: the first 48 bytes of a WAL database's -shm file, which every connection
// of every process shares. Each commit rewrites it (frame count, checksums, salts), and SQLite
// itself compares these bytes with its last copy to learn whether another connection has
// committed (https://sqlite.org/walformat.html, "The WAL-Index Header"). Reading them is one
// pread; `PRAGMA data_version` is a statement with a read transaction (lock, unlock, fstat).
//
// The file stays open until the database is closed, never closed before: closing any descriptor
// of a file drops every POSIX lock this process holds on it, SQLite's own included, after which
// another process would take the -shm file for abandoned and rebuild it under our connections.
import { closeSync, existsSync, openSync, readSync } from "node:fs";

const HEADER_BYTES = 48; // the first of the header's two copies, the one a commit writes last

export class WalIndexHeader {
  private readonly read = new Uint8Array(HEADER_BYTES);
  private readonly readWords = new Uint32Array(this.read.buffer);
  private readonly last = new Uint32Array(HEADER_BYTES / 4);
  private open = true;

  private constructor(private readonly fd: number) {}

  /** The header of `databaseFile`'s -shm file; null when there is none (not WAL, in memory). */
  static open(databaseFile: string): WalIndexHeader | null {
    const shmFile = `${databaseFile}-shm`;
    if (databaseFile === "" || databaseFile === ":memory:" || !existsSync(shmFile)) return null;
    try {
      const header = new WalIndexHeader(openSync(shmFile, "r"));
      header.moved();
      return header;
    } catch {
      return null;
    }
  }

  /** True when the header differs from the one seen at the last call (which it then remembers). */
  moved(): boolean {
    try {
      if (!this.open || readSync(this.fd, this.read, 0, HEADER_BYTES, 0) !== HEADER_BYTES) return true;
    } catch {
      return true;
    }
    let moved = false;
    for (let i = 0; i < this.last.length; i++) {
      if (this.readWords[i] !== this.last[i]) {
        moved = true;
        break;
      }
    }
    if (moved) this.last.set(this.readWords);
    return moved;
  }

  /** Only after the database's connections are closed (see above). */
  close(): void {
    if (!this.open) return;
    this.open = false;
    closeSync(this.fd);
  }
}
