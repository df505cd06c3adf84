// lanes: sqlite
// End to end with the real `svc serve` and `svc admin` processes, a live-environment Tochka account
// pointed at the fake bank (SVC_TOCHKA_API_URL): account discovery from the command line, a
// statement ordered, polled and downloaded in all three formats (operation for operation what the
// bank returned), and a payment uploaded, submitted, signed in the bank and paid.
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { parse as parseCsv } from "csv-parse/sync";
import iconv from "iconv-lite";
import { withAccountKey } from "../../src/formats/validators";
import { ADMIN_TOKEN } from "../helpers/app";
import { BUN, ROOT, startServe, tempDir } from "../helpers/server";
import { paymentFile } from "../payments/support";
import { generateTransactions, startFakeTochka } from "../support/fake-tochka";

const fake = startFakeTochka({ pollsBeforeReady: 2, pageSize: 500 });
afterAll(() => fake.stop());

const KEY = Buffer.alloc(32, 9).toString("base64");
const BIK = "044525104";
const FIRST = withAccountKey("40702810400000001234", BIK);
const SECOND = withAccountKey("40702810700000005678", BIK);

async function svcAdmin(args: string[], env: Record<string, string>) {
  const proc = Bun.spawn([BUN, "run", "cli/svc.ts", "admin", ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, stdout, stderr] = await Promise.all([
    proc.exited,
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
  ]);
  if (code !== 0) throw new Error(`svc admin ${args.join(" ")}: ${stderr}`);
  return JSON.parse(stdout);
}

test("svc serve with a Tochka account: statement in three formats, a payment signed in the bank and paid", async () => {
  const holder = { name: "ООО Ромашка", inn: "7719617469", kpp: "771901001" };
  for (const [number, seed] of [
    [FIRST, 11],
    [SECOND, 12],
  ] as const) {
    const accountId = `${number}/${BIK}`;
    fake.addAccount({
      accountId,
      openingBalance: 2_500_000_00,
      transactions: generateTransactions(1_200, {
        accountId,
        holder,
        from: "2026-10-01",
        to: "2026-10-31",
        seed,
      }),
    });
  }
  fake.addJwt("customer-jwt-e2e");
  const dbPath = join(tempDir(), "svc.db");
  const env = {
    SVC_DB_PATH: dbPath,
    SVC_SECRET_KEY: KEY,
    SVC_TOCHKA_API_URL: fake.apiUrl,
    SVC_TOCHKA_SANDBOX_URL: fake.sandboxUrl,
    SVC_TOCHKA_AUTH_URL: fake.authUrl,
    SVC_BANK_POLL_INTERVAL_MS: "100",
  };
  const company = await svcAdmin(["company", "create", "--name", holder.name, "--inn", holder.inn], env);
  const first = await svcAdmin(
    [
      "account",
      "create",
      "--company",
      company.company_id,
      "--bank",
      "tochka",
      "--number",
      FIRST,
      "--bik",
      BIK,
      "--credentials",
      JSON.stringify({ kind: "jwt", token: "customer-jwt-e2e" }),
    ],
    env,
  );
  // The customer's other account, found through the same login and added in one step.
  const shown = await svcAdmin(
    ["account", "import", "--bank", "tochka", "--via", first.bank_account_id],
    env,
  );
  expect(shown.accounts.map((a: { account_number: string }) => a.account_number)).toEqual([FIRST, SECOND]);
  const added = await svcAdmin(
    ["account", "import", "--bank", "tochka", "--via", first.bank_account_id, "--pick", `${SECOND}/${BIK}`],
    env,
  );
  expect(added.bank_accounts).toHaveLength(1);
  const token = await svcAdmin(
    [
      "token",
      "create",
      "--company",
      company.company_id,
      "--purpose",
      "integration",
      "--read-statements",
      "--send-payments",
      "--account",
      first.bank_account_id,
      "--account",
      added.bank_accounts[0].bank_account_id,
    ],
    env,
  );
  expect(JSON.stringify([first, added])).not.toContain("customer-jwt-e2e");

  const server = await startServe({ dbPath, env });
  try {
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token.token}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const ordered = await call("POST", "/api/v1/integration/statements", {
      bank_account_id: added.bank_accounts[0].bank_account_id,
      date_from: "2026-10-01",
      date_to: "2026-10-31",
      external_id: "october",
    });
    expect(ordered.status).toBe(201);
    const { statement_id } = (await ordered.json()) as { statement_id: string };
    let status = "processing";
    for (let i = 0; i < 200 && status === "processing"; i++) {
      await Bun.sleep(50);
      status = (
        (await (await call("GET", `/api/v1/integration/statements/${statement_id}`)).json()) as {
          status: string;
        }
      ).status;
    }
    expect(status).toBe("ready");

    const booked = fake
      .transactionsOf(`${SECOND}/${BIK}`)
      .filter((tx) => tx.status === "booked" && tx.date >= "2026-10-01" && tx.date <= "2026-10-31");
    const exportOf = (format: string) =>
      call("GET", `/api/v1/integration/statements/${statement_id}/export?format=${format}`);
    const json = (await (await exportOf("json")).json()) as {
      operations: {
        doc_number: string;
        amount: number;
        direction: string;
        doc_date: string;
        purpose: string;
      }[];
    };
    expect(
      json.operations.map((o) => [
        o.doc_number,
        o.doc_date,
        o.direction,
        Math.round(o.amount * 100),
        o.purpose,
      ]),
    ).toEqual(booked.map((tx) => [tx.documentNumber, tx.date, tx.direction, tx.amount, tx.description]));
    const csv = parseCsv(await (await exportOf("csv")).text(), { columns: true }) as Record<string, string>[];
    expect(csv).toHaveLength(booked.length);
    const onec = iconv.decode(Buffer.from(await (await exportOf("1c")).arrayBuffer()), "win1251");
    expect(onec.match(/^СекцияДокумент=/gm)).toHaveLength(booked.length);
    expect(onec.match(/^Номер=(.*)$/gm)?.map((l) => l.slice(6).trim())).toEqual(
      booked.map((tx) => tx.documentNumber),
    );

    // A payment: uploaded, submitted, signed in the bank (the operator's link), paid.
    const form = new FormData();
    form.append("bank_account_id", first.bank_account_id);
    const set = {
      ПлательщикБИК: BIK,
      ПлательщикКорсчет: "30101810745374525104",
      ПлательщикБанк1: "ООО «Банк Точка»",
    };
    form.append(
      "file",
      new Blob([paymentFile(FIRST, [{ number: "77", amount: "1234.56", set }]) as Uint8Array<ArrayBuffer>]),
      "p.txt",
    );
    const uploaded = await fetch(`${server.url}/api/v1/integration/payments/imports`, {
      method: "POST",
      headers: { authorization: `Bearer ${token.token}` },
      body: form,
    });
    expect(uploaded.status).toBe(201);
    const { import_id } = (await uploaded.json()) as { import_id: string };
    const submitted = await call("POST", `/api/v1/integration/payments/imports/${import_id}/submit`, {
      external_id: "p-77",
    });
    expect(submitted.status).toBe(200);
    expect(fake.payments).toHaveLength(1);
    expect(fake.payments[0]!.document.paymentAmount).toBe(1234.56);

    const signIn = await fetch(`${server.url}/admin/login`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: server.url },
      body: new URLSearchParams({ token: ADMIN_TOKEN }).toString(),
    });
    const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
    const page = await (await fetch(`${server.url}/admin/payments`, { headers: { cookie } })).text();
    expect(page).toContain(`href="${fake.url}/sign/${fake.payments[0]!.requestId}"`);

    fake.setPaymentStatus(fake.payments[0]!.requestId, "Paid");
    let item = "submitted";
    for (let i = 0; i < 200 && item === "submitted"; i++) {
      await Bun.sleep(50);
      const imp = (await (await call("GET", `/api/v1/integration/payments/imports/${import_id}`)).json()) as {
        items: { status: string }[];
      };
      item = imp.items[0]!.status;
    }
    expect(item).toBe("signed_and_paid");
    expect(fake.violations).toEqual([]);
    // Every call carried the customer's JWT to the production base.
    expect(new Set(fake.requests.map((r) => `${r.base} ${r.bearer}`))).toEqual(
      new Set(["uapi customer-jwt-e2e"]),
    );
  } finally {
    await server.stop();
  }
}, 60_000);
