// Which adapter serves which `bank` value of an account.
import type { BankAdapter } from "./adapter";
import { UnknownBankError } from "./adapter";
import { createSandboxAdapters, type SandboxDeps } from "./sandbox/adapter";

export class BankRegistry {
  private readonly adapters = new Map<string, BankAdapter>();

  constructor(adapters: Iterable<BankAdapter> = []) {
    for (const adapter of adapters) this.register(adapter);
  }

  /** Throws on a duplicate name: two adapters for one bank is a wiring bug. */
  register(adapter: BankAdapter): this {
    if (this.adapters.has(adapter.bank)) throw new Error(`bank ${adapter.bank} is already registered`);
    this.adapters.set(adapter.bank, adapter);
    return this;
  }

  has(bank: string): boolean {
    return this.adapters.has(bank);
  }

  /** Throws UnknownBankError for a bank no adapter serves. */
  get(bank: string): BankAdapter {
    const adapter = this.adapters.get(bank);
    if (adapter === undefined) throw new UnknownBankError(bank);
    return adapter;
  }

  /** Registered bank names, in registration order. */
  names(): string[] {
    return [...this.adapters.keys()];
  }
}

/** The registry with the three sandbox banks: `sandbox`, `sandbox_failing`, `sandbox_no_statements`. */
export function createSandboxRegistry(deps: SandboxDeps): BankRegistry {
  return new BankRegistry(createSandboxAdapters(deps));
}
