// The operations page of an account: the filters, the totals of the whole match, the coverage of
// the period, a page of operations with each one's details, the pager and the CSV download.
import type { OperationTotals } from "../../../db/operation-rows";
import type { DocType, Party, StatementOperation } from "../../../formats/types";
import type { Coverage } from "../../../statements/coverage";
import type { BankAccountView } from "../../model";
import { formatDate, formatMoney, formatPeriod } from "../format";
import { attr, ErrorBox, Layout, Options, Pager, RuDateInput, type SignedInFrame } from "../layout";

export type OperationFilters = Partial<
  Record<
    "date_from" | "date_to" | "amount_min" | "amount_max" | "counterparty_inn" | "query" | "direction",
    string
  >
>;

const DOC_TYPE: Record<DocType, string> = {
  payment_order: "платёжное поручение",
  payment_request: "платёжное требование",
  collection_order: "инкассовое поручение",
  payment_warrant: "платёжный ордер",
  bank_order: "банковский ордер",
  memorial_order: "мемориальный ордер",
};

function queryString(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  return q.toString();
}

export function OperationsPage({
  frame,
  account,
  filters,
  cursor,
  result,
  error,
}: {
  frame: SignedInFrame;
  account: BankAccountView;
  filters: OperationFilters;
  cursor: string | undefined;
  result: {
    operations: StatementOperation[];
    totals: OperationTotals;
    nextCursor: string | null;
    coverage: Coverage;
  } | null;
  error: string | null;
}) {
  const path = `/admin/accounts/${account.bank_account_id}/operations`;
  return (
    <Layout frame={frame}>
      <h1>
        Операции счёта{" "}
        <a href={`/admin/accounts/${account.bank_account_id}`} safe>
          {account.alias}
        </a>{" "}
        <span class="mono nowrap" safe>
          {account.account_number_masked}
        </span>
      </h1>
      <section class="card">
        <form method="get" action={path} class="grid" id="operation-filters">
          <label>
            С даты
            <RuDateInput name="date_from" required value={filters.date_from} />
          </label>
          <label>
            По дату (не больше 90 дней)
            <RuDateInput name="date_to" required value={filters.date_to} />
          </label>
          <label>
            Сумма от, ₽
            <input
              name="amount_min"
              inputmode="decimal"
              placeholder="0,00"
              value={attr(filters.amount_min)}
            />
          </label>
          <label>
            Сумма до, ₽
            <input
              name="amount_max"
              inputmode="decimal"
              placeholder="0,00"
              value={attr(filters.amount_max)}
            />
          </label>
          <label>
            ИНН контрагента
            <input
              name="counterparty_inn"
              pattern="\d{10}|\d{12}"
              inputmode="numeric"
              value={attr(filters.counterparty_inn)}
            />
          </label>
          <label>
            Текст (назначение, контрагент, номер)
            <input name="query" maxlength="200" value={attr(filters.query)} />
          </label>
          <label>
            Направление
            <select name="direction">
              <Options
                items={[
                  ["", "все"],
                  ["credit", "поступления"],
                  ["debit", "списания"],
                ]}
                selected={filters.direction ?? ""}
              />
            </select>
          </label>
          <div>
            <button type="submit" class="secondary">
              Показать
            </button>{" "}
            <a href={path}>Сбросить</a>
          </div>
        </form>
      </section>
      <section class="card">
        <ErrorBox message={error} />
        {result === null ? "" : <Found path={path} filters={filters} cursor={cursor} result={result} />}
      </section>
    </Layout>
  );
}

function Found({
  path,
  filters,
  cursor,
  result,
}: {
  path: string;
  filters: OperationFilters;
  cursor: string | undefined;
  result: NonNullable<Parameters<typeof OperationsPage>[0]["result"]>;
}) {
  const { totals, operations, coverage } = result;
  return (
    <>
      <p id="totals">
        <strong safe>{`Найдено: ${totals.count}`}</strong>
        <span
          safe
        >{` · поступления: ${formatMoney(totals.creditKopecks)} · списания: ${formatMoney(totals.debitKopecks)}`}</span>
        {totals.count > 0 ? (
          <>
            {" · "}
            <a href={`${path}/csv?${queryString(filters)}`}>Скачать CSV</a>
          </>
        ) : (
          ""
        )}
      </p>
      <CoverageNote coverage={coverage} />
      <table id="operations">
        <thead>
          <tr>
            <th>Дата</th>
            <th>Номер</th>
            <th>Контрагент</th>
            <th>Назначение платежа</th>
            <th class="num">Сумма</th>
          </tr>
        </thead>
        <tbody>
          {operations.map((op) => (
            <OperationRow op={op} />
          ))}
        </tbody>
      </table>
      {operations.length === 0 ? <p class="muted">Операций не найдено.</p> : ""}
      <Pager path={path} filters={{ ...filters, cursor }} nextCursor={result.nextCursor} />
    </>
  );
}

/** Which days of the period have no data, or only part of it: what the totals cannot include. */
function CoverageNote({ coverage }: { coverage: Coverage }) {
  if (coverage.complete) return <p class="small muted">Выписки есть за каждый день периода.</p>;
  const gaps = [
    ...coverage.missing.map((r) => `нет данных за ${formatPeriod(r.date_from, r.date_to)}`),
    ...coverage.partial.map((p) => `неполные данные за ${formatDate(p.date)}`),
  ];
  return (
    <p class="flash warn small" safe>
      {`Не все дни периода покрыты выписками: ${gaps.join("; ")}.`}
    </p>
  );
}

function OperationRow({ op }: { op: StatementOperation }) {
  const credit = op.direction === "credit";
  const other = credit ? op.payer : op.payee;
  return (
    <tr data-operation-id={op.operation_id} data-direction={op.direction} data-kopecks={String(op.amount)}>
      <td class="nowrap" safe>
        {formatDate(op.doc_date)}
      </td>
      <td safe>{op.doc_number}</td>
      <td>
        <div safe>{other.name}</div>
        {other.inn ? (
          <div class="small muted nowrap" safe>
            {`ИНН ${other.inn}`}
          </div>
        ) : (
          ""
        )}
      </td>
      <td class="purpose">
        <div safe>{op.purpose}</div>
        <details>
          <summary>реквизиты</summary>
          <OperationDetails op={op} />
        </details>
      </td>
      <td class={`num nowrap ${credit ? "credit" : "debit"}`} safe>
        {`${credit ? "+" : "−"}${formatMoney(op.amount, op.currency)}`}
      </td>
    </tr>
  );
}

function PartyLines({ title, party }: { title: string; party: Party }) {
  return (
    <>
      <dt safe>{title}</dt>
      <dd>
        <div safe>{party.name}</div>
        <div class="small" safe>
          {[
            party.inn ? `ИНН ${party.inn}` : "",
            party.kpp ? `КПП ${party.kpp}` : "",
            party.account ? `счёт ${party.account}` : "",
          ]
            .filter(Boolean)
            .join(" · ")}
        </div>
        <div class="small muted" safe>
          {[party.bank_name, party.bank_bik ? `БИК ${party.bank_bik}` : ""].filter(Boolean).join(" · ")}
        </div>
      </dd>
    </>
  );
}

function OperationDetails({ op }: { op: StatementOperation }) {
  return (
    <dl class="details">
      <dt>Документ</dt>
      <dd
        safe
      >{`${DOC_TYPE[op.doc_type] ?? op.doc_type} № ${op.doc_number} от ${formatDate(op.doc_date)}`}</dd>
      <PartyLines title="Плательщик" party={op.payer} />
      <PartyLines title="Получатель" party={op.payee} />
      {op.uin ? (
        <>
          <dt>УИН</dt>
          <dd safe>{op.uin}</dd>
        </>
      ) : (
        ""
      )}
      {op.priority ? (
        <>
          <dt>Очерёдность</dt>
          <dd safe>{op.priority}</dd>
        </>
      ) : (
        ""
      )}
    </dl>
  );
}
