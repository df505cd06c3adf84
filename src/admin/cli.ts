// `svc admin …`: the admin operations on the database file, through the same admin services as
// the admin API. Results are printed as JSON; errors as the API's envelope on stderr.
import { Database } from "bun:sqlite";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { auditExportChunks, isInstant } from "../audit/audit-export";
import { BankError } from "../banks/adapter";
import type { Config } from "../config";
import { ApiError, errorEnvelope } from "../core/errors";
import { sqlitePort } from "../db/sql-port";
import { BackupError, backupDatabase, verifyBackup } from "../ops/backup";
import type { AdminServices } from "./areas";
import { MigrateToPostgresUsage, migrateToPostgres } from "./migrate-to-postgres";

/** The admin services on the database file, and how to close it; given by the composition root. */
export type OpenAdminServices = (config: Config) => { admin: AdminServices; store: { close(): void } };

const HELP = `использование: svc admin <объект> <действие> [параметры]
  company create --name NAME --inn INN [--kpp KPP]          создать компанию
  company list                                              компании
  account create --company ID --bank BANK --number 20ЦИФР --bik 9ЦИФР [--currency RUB] [--alias A]
                 [--ops-per-day N] [--opening-balance RUB] [--credentials JSON]
                 [--environment production|sandbox]         добавить счёт
  account list [--company ID]                               счета
  account import --bank tochka --via ID [--pick НОМЕР/БИК]... [--all]
                 счета клиента в банке, видимые через доступ счёта ID;
                 с --pick или --all добавляет выбранные (та же компания и доступ)
  account credentials ID --credentials JSON                 новый доступ к банку для счёта
  token create --company ID --purpose integration|mcp [--name NAME] [--mode live|test]
               [--read-statements] [--send-payments] [--account ID]... [--allow-ip IP/CIDR]...
               [--rate-limit N] [--expires-at ISO]
               (каждый --account получает чтение и/или платежи по заданным правам)
  token list [--company ID]                                 токены
  token revoke ID                                           отозвать токен
  audit [--token ID] [--action A] [--limit N]               журнал аудита, новые сверху
  audit export [--since ISO] [--until ISO] [--format jsonl|csv]
                                                            журнал за период в stdout, старые сверху
  backup --to FILE          копия базы на ходу (сервер может работать)
  migrate-to-postgres       скопировать базу SQLite (SVC_DB_PATH) в пустую базу PostgreSQL
                            (SVC_DATABASE_URL); сервер на файле должен быть остановлен
  verify FILE               проверка копии: целостность, версия схемы, число строк`;

const OPTIONS = {
  name: { type: "string" },
  inn: { type: "string" },
  kpp: { type: "string" },
  company: { type: "string" },
  bank: { type: "string" },
  number: { type: "string" },
  bik: { type: "string" },
  currency: { type: "string" },
  alias: { type: "string" },
  "ops-per-day": { type: "string" },
  "opening-balance": { type: "string" },
  credentials: { type: "string" },
  environment: { type: "string" },
  via: { type: "string" },
  pick: { type: "string", multiple: true },
  all: { type: "boolean" },
  purpose: { type: "string" },
  mode: { type: "string" },
  "read-statements": { type: "boolean" },
  "send-payments": { type: "boolean" },
  account: { type: "string", multiple: true },
  "allow-ip": { type: "string", multiple: true },
  "rate-limit": { type: "string" },
  "expires-at": { type: "string" },
  token: { type: "string" },
  action: { type: "string" },
  limit: { type: "string" },
  since: { type: "string" },
  until: { type: "string" },
  format: { type: "string" },
  to: { type: "string" },
} as const;

function required(value: string | undefined, flag: string): string {
  if (value === undefined) throw new UsageError(`нужен параметр --${flag}`);
  return value;
}

function optionalInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value)) throw new UsageError(`--${flag}: целое число`);
  return Number(value);
}

class UsageError extends Error {}

function environmentOf(value: string | undefined): "production" | "sandbox" | undefined {
  if (value === undefined || value === "production" || value === "sandbox") return value;
  throw new UsageError("--environment: production или sandbox");
}

/** The bank login: a JSON object, as the admin API requires (not an array, string or number). */
function credentialsObject(text: string): Record<string, unknown> {
  const value: unknown = JSON.parse(text);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new UsageError("--credentials: объект JSON");
  }
  return value as Record<string, unknown>;
}

export async function runAdminCommand(
  config: Config,
  argv: string[],
  openServices: OpenAdminServices,
): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  } catch (e) {
    console.error(`${(e as Error).message}\n${HELP}`);
    return 2;
  }
  const { values: v, positionals } = parsed;
  const [object, action, arg] = positionals;
  if (!object || object === "help") {
    console.log(HELP);
    return object ? 0 : 2;
  }
  // These read the file directly: no migration, no services, and verify never opens the live database.
  try {
    if (object === "backup") {
      const to = required(v.to, "to");
      console.log(JSON.stringify({ file: to, ...backupDatabase(config.dbPath, to) }, null, 2));
      return 0;
    }
    if (object === "verify") {
      const report = verifyBackup(required(action, "backup file (positional)"));
      console.log(JSON.stringify(report, null, 2));
      return report.ok ? 0 : 1;
    }
    if (object === "audit" && action === "export") return await exportAudit(config, v);
    if (object === "migrate-to-postgres") return await migrateToPostgres(config);
  } catch (e) {
    if (e instanceof UsageError || e instanceof MigrateToPostgresUsage) {
      console.error(`${e.message}\n${HELP}`);
      return 2;
    }
    if (e instanceof BackupError) {
      console.error(e.message);
      return 1;
    }
    throw e;
  }
  const services = openServices(config);
  const admin = services.admin;
  const actor = { requestId: "cli", ip: null };
  try {
    let result: unknown;
    switch (`${object} ${action ?? ""}`.trim()) {
      case "company create":
        result = admin.companies.create(
          { name: required(v.name, "name"), inn: required(v.inn, "inn"), kpp: v.kpp },
          actor,
        );
        break;
      case "company list":
        result = { companies: admin.companies.list() };
        break;
      case "account create": {
        const opening = v["opening-balance"];
        result = await admin.accounts.createVerified(
          {
            company_id: required(v.company, "company"),
            bank: required(v.bank, "bank"),
            account_number: required(v.number, "number"),
            bik: required(v.bik, "bik"),
            currency: v.currency,
            alias: v.alias,
            credentials: v.credentials === undefined ? undefined : credentialsObject(v.credentials),
            environment: environmentOf(v.environment),
            sandbox:
              v["ops-per-day"] === undefined && opening === undefined
                ? undefined
                : {
                    ops_per_day: optionalInt(v["ops-per-day"], "ops-per-day"),
                    opening_balance: opening === undefined ? undefined : Number(opening),
                  },
          },
          actor,
        );
        break;
      }
      case "account list":
        result = { bank_accounts: admin.accounts.list(v.company) };
        break;
      case "account import": {
        const via = admin.accounts.atBank(required(v.via, "via"), required(v.bank, "bank"));
        const shown = await admin.bankLogins.discover(via.bank_account_id);
        const picks = v.all
          ? shown.accounts.filter((a) => a.bank_account_id === null)
          : (v.pick ?? []).map((pick) => {
              const m = /^(\d{20})\/(\d{9})$/.exec(pick);
              if (!m) throw new UsageError(`--pick: НОМЕР/БИК (20 и 9 цифр), а не "${pick}"`);
              return { account_number: m[1]!, bik: m[2]! };
            });
        result =
          picks.length === 0
            ? shown
            : {
                bank_accounts: await admin.bankLogins.import(
                  {
                    bank_account_id: via.bank_account_id,
                    accounts: picks.map((p) => ({ account_number: p.account_number, bik: p.bik })),
                  },
                  actor,
                ),
              };
        break;
      }
      case "account credentials":
        result = await admin.bankLogins.replaceCredentials(
          required(arg, "account id (positional)"),
          credentialsObject(required(v.credentials, "credentials")),
          actor,
        );
        break;
      case "token create": {
        const purpose = required(v.purpose, "purpose");
        if (purpose !== "integration" && purpose !== "mcp")
          throw new UsageError("--purpose: integration или mcp");
        const mode = v.mode ?? "live";
        if (mode !== "live" && mode !== "test") throw new UsageError("--mode: live или test");
        const created = admin.tokens.create(
          {
            company_id: required(v.company, "company"),
            name: v.name ?? `${purpose} token`,
            purpose,
            mode,
            scope_read_statements: v["read-statements"] ?? false,
            scope_send_payments: v["send-payments"] ?? false,
            accounts: (v.account ?? []).map((id) => ({
              bank_account_id: id,
              allow_read_statements: v["read-statements"] ?? false,
              allow_send_payments: v["send-payments"] ?? false,
            })),
            allowed_ips: v["allow-ip"] ?? [],
            rate_limit_per_minute: optionalInt(v["rate-limit"], "rate-limit") ?? null,
            expires_at: v["expires-at"] ?? null,
          },
          actor,
        );
        console.error('The raw token is printed once, in the "token" field. Store it now.');
        result = created;
        break;
      }
      case "token list":
        result = { tokens: admin.tokens.list(v.company) };
        break;
      case "token revoke":
        result = admin.tokens.revoke(required(arg, "token id (positional)"), actor);
        break;
      case "audit":
        result = admin.audit.page({
          api_token_id: v.token,
          action: v.action,
          limit: optionalInt(v.limit, "limit"),
        });
        break;
      default:
        throw new UsageError(`неизвестная команда "${positionals.join(" ")}"`);
    }
    console.log(JSON.stringify(result, null, 2));
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`${e.message}\n${HELP}`);
      return 2;
    }
    if (e instanceof ApiError) {
      console.error(JSON.stringify(errorEnvelope(e)));
      return 1;
    }
    if (e instanceof BankError) {
      const details = e.bankCode ? { bank_code: e.bankCode } : undefined;
      console.error(JSON.stringify(errorEnvelope(new ApiError("bank_error", e.message, details))));
      return 1;
    }
    if (e instanceof SyntaxError) {
      console.error(`--credentials: объект JSON (${e.message})`);
      return 2;
    }
    throw e;
  } finally {
    services.store.close();
  }
}

async function exportAudit(
  config: Config,
  v: { since?: string; until?: string; format?: string },
): Promise<number> {
  const format = v.format ?? "jsonl";
  if (format !== "jsonl" && format !== "csv") throw new UsageError("--format: jsonl или csv");
  for (const flag of ["since", "until"] as const) {
    const value = v[flag];
    if (value !== undefined && !isInstant(value)) throw new UsageError(`--${flag}: дата или время ISO 8601`);
  }
  if (config.dbPath === ":memory:" || !existsSync(config.dbPath)) {
    throw new BackupError(`нет базы данных: ${config.dbPath}`);
  }
  const db = new Database(config.dbPath, { readonly: true, strict: true });
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    for (const chunk of auditExportChunks(sqlitePort(db), { since: v.since, until: v.until }, format)) {
      if (!process.stdout.write(chunk)) await once(process.stdout, "drain");
    }
  } finally {
    db.close();
  }
  return 0;
}
