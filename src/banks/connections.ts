// Bank logins at rest: sealed by the secret box, opened only for a bank adapter. Token renewals
// (OAuth refresh tokens rotate: the bank hands out a new one every time and the old one dies) run
// one at a time per login: in this process through a shared promise, across processes through a
// lease on the row, and the new login is committed before anyone uses it.
import { randomUUID } from "node:crypto";
import type { SecretBox } from "../auth/secret-box";
import type { Clock } from "../core/clock";
import type { BankConnectionRepository, ConnectionStatus } from "../db/repos/connections";
import { BankError, type ConnectionStore } from "./adapter";

export interface BankConnectionsDeps {
  repo: BankConnectionRepository;
  secretBox: SecretBox | null;
  clock: Clock;
  atomically: <T>(fn: () => T) => T;
  /** How long a renewal may hold the login; past it another process may take over. */
  leaseMs?: number;
  /** How often a process waiting for another's renewal looks again. */
  waitStepMs?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class BankConnections implements ConnectionStore {
  private readonly renewing = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: BankConnectionsDeps) {}

  private box(): SecretBox {
    if (!this.deps.secretBox)
      throw new BankError("bank_credentials", "Не задан ключ SVC_SECRET_KEY", { retryable: false });
    return this.deps.secretBox;
  }

  private now(): string {
    return this.deps.clock.now().toISOString();
  }

  /** Seals a new login; returns its id. Call inside the caller's transaction. */
  create(bank: string, credentials: unknown, status: ConnectionStatus): string {
    const id = randomUUID();
    const at = this.now();
    this.deps.repo.insert({
      id,
      bank,
      credentialsEnc: this.box().seal(JSON.stringify(credentials)),
      status,
      statusMessage: null,
      createdAt: at,
      updatedAt: at,
    });
    return id;
  }

  read(connectionId: string): unknown {
    const sealed = this.deps.repo.sealed(connectionId);
    return sealed ? JSON.parse(this.box().open(sealed)) : null;
  }

  /** Stores a login the operator gave or completed (a renewed token, the bank's consent). */
  replace(connectionId: string, credentials: unknown, status: ConnectionStatus): void {
    this.deps.atomically(() =>
      this.deps.repo.store(
        connectionId,
        this.box().seal(JSON.stringify(credentials)),
        status,
        null,
        this.now(),
      ),
    );
  }

  renew(connectionId: string, renew: (current: unknown) => Promise<unknown | null>): Promise<unknown> {
    const running = this.renewing.get(connectionId);
    if (running) return running;
    const work = this.renewAlone(connectionId, renew).finally(() => this.renewing.delete(connectionId));
    this.renewing.set(connectionId, work);
    return work;
  }

  private async renewAlone(
    connectionId: string,
    renew: (current: unknown) => Promise<unknown | null>,
  ): Promise<unknown> {
    const leaseMs = this.deps.leaseMs ?? 60_000;
    const step = this.deps.waitStepMs ?? 200;
    // Another process renewing: wait for its lease to end (it commits or dies), then look again.
    const giveUpAt = this.deps.clock.now().getTime() + leaseMs + step;
    for (;;) {
      const now = this.deps.clock.now().getTime();
      if (this.deps.repo.acquireLease(connectionId, now, now + leaseMs)) break;
      if (now > giveUpAt) {
        throw new BankError("bank_unavailable", "Обновление доступа к банку не завершилось", {
          retryable: true,
        });
      }
      await sleep(step);
    }
    try {
      const current = this.read(connectionId);
      const next = await renew(current);
      if (next === null) {
        this.deps.repo.releaseLease(connectionId);
        return current;
      }
      const sealed = this.box().seal(JSON.stringify(next));
      this.deps.atomically(() => this.deps.repo.store(connectionId, sealed, "active", null, this.now()));
      return next;
    } catch (e) {
      this.deps.repo.releaseLease(connectionId);
      throw e;
    }
  }

  refused(connectionId: string, message: string): void {
    this.deps.repo.setStatus(connectionId, "renewal_needed", message, this.now());
  }
}
