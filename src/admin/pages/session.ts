// Web sessions of the admin pages. They live in this process's memory:
// a restart signs every administrator out, which is acceptable for a handful of operators and
// keeps the session secret out of the database file.
import { randomBytes } from "node:crypto";
import type { Clock } from "../../core/clock";

const SESSION_IDLE_MS = 8 * 60 * 60 * 1000;
const SESSION_MAX_MS = 24 * 60 * 60 * 1000;
const MAX_SESSIONS = 1000;
const MAX_USED_FORMS = 200;

export type FlashKind = "ok" | "error";

export interface Flash {
  kind: FlashKind;
  text: string;
}

export interface AdminSession {
  /** 32 random bytes, base64url: the cookie value. */
  readonly id: string;
  /** Per-session anti-forgery token, sent back in a hidden field of every form. */
  readonly csrf: string;
  readonly createdAt: number;
  lastSeenAt: number;
  /** Messages for the next page shown (after a redirect). */
  flash: Flash[];
  /** One-time ids of forms already carried out (a reloaded POST is not repeated). */
  usedForms: Set<string>;
}

export function randomSecret(): string {
  return randomBytes(32).toString("base64url");
}

export class AdminSessionStore {
  private readonly sessions = new Map<string, AdminSession>();

  constructor(private readonly clock: Clock) {}

  create(): AdminSession {
    const now = this.clock.now().getTime();
    this.sweep(now);
    if (this.sessions.size >= MAX_SESSIONS) {
      // The oldest session gives way (Map keeps insertion order).
      const oldest = this.sessions.keys().next().value;
      if (oldest !== undefined) this.sessions.delete(oldest);
    }
    const session: AdminSession = {
      id: randomSecret(),
      csrf: randomSecret(),
      createdAt: now,
      lastSeenAt: now,
      flash: [],
      usedForms: new Set(),
    };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The live session with this id, its idle timer restarted; null when unknown or expired. */
  touch(id: string | null): AdminSession | null {
    if (id === null) return null;
    const session = this.sessions.get(id);
    if (!session) return null;
    const now = this.clock.now().getTime();
    if (this.expired(session, now)) {
      this.sessions.delete(id);
      return null;
    }
    session.lastSeenAt = now;
    return session;
  }

  destroy(id: string): void {
    this.sessions.delete(id);
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Remembers that a one-time form was carried out; false when it already was. */
  useForm(session: AdminSession, formId: string): boolean {
    if (session.usedForms.has(formId)) return false;
    if (session.usedForms.size >= MAX_USED_FORMS) {
      const first = session.usedForms.values().next().value;
      if (first !== undefined) session.usedForms.delete(first);
    }
    session.usedForms.add(formId);
    return true;
  }

  private expired(session: AdminSession, now: number): boolean {
    return now - session.lastSeenAt >= SESSION_IDLE_MS || now - session.createdAt >= SESSION_MAX_MS;
  }

  private sweep(now: number): void {
    for (const [id, session] of this.sessions) if (this.expired(session, now)) this.sessions.delete(id);
  }
}
