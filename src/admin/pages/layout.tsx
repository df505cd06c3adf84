// The frame of every admin page and small shared pieces. Text from data (names, bank texts,
// audit entries) is always rendered through `safe` or escapeHtml: JSX here does not escape
// children by itself.
import { escapeHtml, type PropsWithChildren } from "@kitajs/html";
import type { BankAccountView } from "../model";
import { RU_DATE_PATTERN } from "./format";
import type { Flash } from "./session";

export type NavKey = "companies" | "accounts" | "tokens" | "oauth" | "statements" | "payments" | "audit";

export interface Frame {
  title: string;
  active: NavKey | null;
  /** The session's anti-forgery token; null on the sign-in page. */
  csrf: string | null;
  flash: Flash[];
  /** The business time zone (SVC_TIMEZONE), in which the pages show times. */
  timeZone: string;
}

const NAV: [NavKey, string, string][] = [
  ["companies", "/admin/companies", "Компании"],
  ["accounts", "/admin/accounts", "Счета"],
  ["tokens", "/admin/tokens", "Токены"],
  ["oauth", "/admin/oauth", "Приложения"],
  ["statements", "/admin/statements", "Выписки"],
  ["payments", "/admin/payments", "Платежи"],
  ["audit", "/admin/audit-log", "Журнал аудита"],
];

export function Layout({ frame, children }: PropsWithChildren<{ frame: Frame }>) {
  return (
    <>
      {"<!doctype html>"}
      <html lang="ru">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <meta name="referrer" content="same-origin" />
          <title safe>{`${frame.title} · svc`}</title>
          <link rel="stylesheet" href="/admin/assets/app.css" />
          <script src="/admin/assets/app.js" defer></script>
        </head>
        <body>
          {frame.csrf !== null ? (
            <header class="top">
              <span class="brand">svc · администрирование</span>
              <nav>
                {NAV.map(([key, href, label]) => (
                  <a href={href} class={key === frame.active ? "active" : undefined}>
                    {label}
                  </a>
                ))}
              </nav>
              <form method="post" action="/admin/logout">
                <CsrfField token={frame.csrf} />
                <button type="submit">Выйти</button>
              </form>
            </header>
          ) : (
            ""
          )}
          <main>
            {frame.flash.map((f) => (
              <div class={`flash ${f.kind}`} role={f.kind === "error" ? "alert" : "status"} safe>
                {f.text}
              </div>
            ))}
            {children}
          </main>
        </body>
      </html>
    </>
  );
}

/** Data in an attribute value: the JSX runtime escapes only `"` there, so `&` would be read as
 *  the start of a character reference; this escapes it fully. */
export function attr(value: string | undefined): string | undefined {
  return value === undefined ? undefined : escapeHtml(value);
}

/** A date typed the Russian way (`дд.мм.гггг`, read on the server: parseRuDate), whatever the
 *  browser's language. */
export function RuDateInput({ name, value, required }: { name: string; value?: string; required?: boolean }) {
  return (
    <input
      name={name}
      required={required}
      pattern={RU_DATE_PATTERN}
      placeholder="дд.мм.гггг"
      inputmode="numeric"
      value={attr(value)}
    />
  );
}

function CsrfField({ token }: { token: string }) {
  return <input type="hidden" name="_csrf" value={token} />;
}

/** A form posting to the admin pages, with the anti-forgery field already in it. */
export function PostForm({
  action,
  csrf,
  class: className,
  enctype,
  children,
}: PropsWithChildren<{ action: string; csrf: string; class?: string; enctype?: "multipart/form-data" }>) {
  return (
    <form method="post" action={action} class={className} enctype={enctype}>
      <CsrfField token={csrf} />
      {children}
    </form>
  );
}

export function ErrorBox({ message }: { message: string | null }) {
  if (message === null) return "";
  return (
    <div class="flash error" role="alert" safe>
      {message}
    </div>
  );
}

export function Badge({ kind, text }: { kind: "ok" | "bad" | "warn" | "plain"; text: string }) {
  return (
    <span class={kind === "plain" ? "badge" : `badge ${kind}`} safe>
      {text}
    </span>
  );
}

/** Options of a <select>, the chosen one marked. */
export function Options({ items, selected }: { items: [value: string, label: string][]; selected?: string }) {
  return (
    <>
      {items.map(([value, label]) => (
        <option value={value} selected={value === selected} safe>
          {label}
        </option>
      ))}
    </>
  );
}

/** A signed-in page's frame: it carries the session's anti-forgery token. */
export type SignedInFrame = Frame & { csrf: string };

/** A form post's fields (and a refused form's values, shown again as typed). */
export type FormValues = Record<string, string>;

/** An account as the pages name it in passing. */
export const accountLabel = (a: BankAccountView) => `${a.alias} (${a.account_number_masked})`;

/** The query part of a list page's address (its filters and cursor); empty values left out. */
function queryString(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const text = q.toString();
  return text ? `?${text}` : "";
}

export function MessagePage({ frame, heading, text }: { frame: Frame; heading: string; text: string }) {
  return (
    <Layout frame={frame}>
      <section class="card">
        <h1 safe>{heading}</h1>
        <p safe>{text}</p>
        <p>
          <a href="/admin">На главную</a>
        </p>
      </section>
    </Layout>
  );
}

/** A list's links to its first page (when not on it) and to the next one (when there is one). */
export function Pager({
  path,
  filters,
  nextCursor,
}: {
  path: string;
  filters: Record<string, string | undefined>;
  nextCursor: string | null;
}) {
  return (
    <div class="pager">
      {filters.cursor ? (
        <a class="button secondary" href={`${path}${queryString({ ...filters, cursor: undefined })}`}>
          В начало
        </a>
      ) : (
        ""
      )}
      {nextCursor ? (
        <a
          class="button secondary"
          rel="next"
          href={`${path}${queryString({ ...filters, cursor: nextCursor })}`}
        >
          Дальше
        </a>
      ) : (
        ""
      )}
    </div>
  );
}

const TOKEN_PREFIX = /(svc_(?:test|live)_[0-9A-Za-z]{4}…)/u;

/** Text that may name tokens by their prefix: each prefix set as code, never split. */
export function WithPrefixes({ text }: { text: string }) {
  return (
    <>
      {text.split(TOKEN_PREFIX).map((part, i) =>
        i % 2 === 1 ? (
          <span class="mono nowrap" safe>
            {part}
          </span>
        ) : (
          escapeHtml(part)
        ),
      )}
    </>
  );
}

/**
 * The second step before what cannot be undone: the same post again with `confirm=yes`, or back.
 * A page of its own, so that it works without scripts.
 */
export function ConfirmPage({
  frame,
  heading,
  text,
  action,
  confirmLabel,
  back,
}: {
  frame: SignedInFrame;
  heading: string;
  text: string;
  action: string;
  confirmLabel: string;
  back: string;
}) {
  return (
    <Layout frame={frame}>
      <section class="card confirm">
        <h1 safe>{heading}</h1>
        <p>
          <WithPrefixes text={text} />
        </p>
        <p class="muted">Это действие нельзя отменить.</p>
        <PostForm action={action} csrf={frame.csrf}>
          <input type="hidden" name="confirm" value="yes" />
          <button type="submit" class="danger">
            {confirmLabel}
          </button>{" "}
          <a class="button secondary" href={back}>
            Отмена
          </a>
        </PostForm>
      </section>
    </Layout>
  );
}

/** The «Отозвать» button of a token or an app's grant: it leads to the confirmation first. */
export function RevokeForm({
  action,
  csrf,
  kind,
}: {
  action: string;
  csrf: string;
  kind: "danger" | "secondary";
}) {
  return (
    <PostForm action={action} csrf={csrf} class="inline">
      <button type="submit" class={kind}>
        Отозвать
      </button>
    </PostForm>
  );
}
