// svc wired to a fake Tochka: the test app's bank addresses point at the fake, and a company with
// a Tochka account (added through the admin API as an operator would) and a live token.
import { afterEach, expect } from "bun:test";
import { withAccountKey } from "../../src/formats/validators";
import { json, makeTestApp, type TestApp } from "../helpers/app";
import {
  type FakeTochka,
  type FakeTochkaOptions,
  generateTransactions,
  startFakeTochka,
} from "./fake-tochka";

const TOCHKA_BIK = "044525104";
export const PUBLIC_URL = "https://svc.example.com";

export function tochkaEnv(fake: FakeTochka, extra: Record<string, string> = {}): Record<string, string> {
  return {
    SVC_TOCHKA_API_URL: fake.apiUrl,
    SVC_TOCHKA_SANDBOX_URL: fake.sandboxUrl,
    SVC_TOCHKA_AUTH_URL: fake.authUrl,
    SVC_PUBLIC_URL: PUBLIC_URL,
    ...extra,
  };
}

let counter = 0;
/** A fresh valid account number at Tochka. */
function tochkaAccountNumber(): string {
  counter += 1;
  return withAccountKey(`40702810${String(700_000 + counter).padStart(12, "0")}`, TOCHKA_BIK);
}

export interface TochkaAccount {
  id: string;
  number: string;
  /** The bank's account id, "{number}/{BIK}". */
  bankId: string;
}

export interface TochkaWorld {
  fake: FakeTochka;
  t: TestApp;
  companyId: string;
  /** A live integration token with statements and payments on every account added with `account`. */
  token: string;
  tokenId: string;
  account(opts?: {
    environment?: "production" | "sandbox";
    credentials?: unknown;
    transactions?: number;
    openingBalance?: number;
    seed?: number;
  }): Promise<TochkaAccount>;
  /** Polls until the statement is ready or failed (each tick is one bank call). */
  settle(statementId: string, token?: string): Promise<Record<string, unknown>>;
}

const HOLDER = { name: "ООО Ромашка", inn: "7719617469", kpp: "771901001" };

export async function tochkaWorld(
  options: FakeTochkaOptions & { env?: Record<string, string>; start?: string; dbPath?: string } = {},
): Promise<TochkaWorld> {
  const fake = startFakeTochka(options);
  const t = makeTestApp(tochkaEnv(fake, options.env), options.start, { dbPath: options.dbPath });
  const company = t.services.admin.companies.create({ name: HOLDER.name, inn: HOLDER.inn, kpp: HOLDER.kpp });
  const token = t.fixtures.token(company.company_id, { mode: "live", read: true, send: true });
  const accountIds: string[] = [];

  const world: TochkaWorld = {
    fake,
    t,
    companyId: company.company_id,
    token: token.token,
    tokenId: token.api_token_id,
    async account(opts = {}) {
      const number = tochkaAccountNumber();
      const bankId = `${number}/${TOCHKA_BIK}`;
      fake.addAccount({
        accountId: bankId,
        openingBalance: opts.openingBalance ?? 150_000_00,
        transactions: generateTransactions(opts.transactions ?? 40, {
          accountId: bankId,
          holder: HOLDER,
          from: "2026-10-01",
          to: "2026-10-31",
          seed: opts.seed ?? counter,
        }),
      });
      const environment = opts.environment ?? "production";
      let credentials = opts.credentials;
      if (credentials === undefined && environment === "production") {
        const jwt = `jwt-${number}`;
        fake.addJwt(jwt);
        credentials = { kind: "jwt", token: jwt };
      }
      const res = await t.admin("POST", "/bank-accounts", {
        company_id: company.company_id,
        bank: "tochka",
        account_number: number,
        bik: TOCHKA_BIK,
        environment,
        ...(credentials === undefined ? {} : { credentials }),
      });
      expect(res.status).toBe(201);
      const id = (await json<{ bank_account_id: string }>(res)).bank_account_id;
      accountIds.push(id);
      t.services.admin.tokens.patch(token.api_token_id, {
        accounts: accountIds.map((a) => ({
          bank_account_id: a,
          allow_read_statements: true,
          allow_send_payments: true,
        })),
      });
      return { id, number, bankId };
    },
    async settle(statementId, token = world.token) {
      for (let i = 0; i < 20; i++) {
        await t.services.poller.tick();
        await t.services.poller.idle();
        const row = t.services.statementRepo.findById(statementId);
        if (row && row.status !== "processing") break;
        // Past any Retry-After or backoff the bank asked for.
        t.clock.advance(15 * 60_000);
      }
      const res = await t.request("GET", `/api/v1/integration/statements/${statementId}`, { token });
      return json(res);
    },
  };
  return world;
}

/**
 * One Tochka world per test: `start` makes it; after the test, the fake must have seen no request
 * and given no answer that breaks the bank's document, and it is stopped.
 */
export function tochkaWorlds(): { start: typeof tochkaWorld } {
  let current: TochkaWorld | null = null;
  afterEach(async () => {
    const w = current;
    current = null;
    if (w) {
      await w.fake.stop();
      expect(w.fake.violations).toEqual([]);
    }
  });
  return {
    start: async (options) => {
      current = await tochkaWorld(options);
      return current;
    },
  };
}
