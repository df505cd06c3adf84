// A signed-in administrator's browser over app.handle(): the session cookie, the CSRF token, and
// form posts from our own origin.
import { expect } from "bun:test";
import { ADMIN_TOKEN, BASE, type TestApp } from "./app";

const ORIGIN = BASE; // http://localhost
export const FORM = "application/x-www-form-urlencoded";

export interface Browser {
  t: TestApp;
  cookie: string;
  csrf: string;
  get(path: string): Promise<Response>;
  /** A form post from our own origin with the session's CSRF token unless told otherwise. */
  post(
    path: string,
    fields: Record<string, string>,
    opts?: { csrf?: string | null; headers?: Record<string, string> },
  ): Promise<Response>;
}

export function raw(t: TestApp, path: string, init: RequestInit = {}, base = BASE): Promise<Response> {
  return t.app.handle(new Request(`${base}${path}`, init));
}

/** A form post; a header given as "" is left out (e.g. `origin: ""` for a post without Origin). */
export function postForm(
  t: TestApp,
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) {
  const all = Object.entries({ "content-type": FORM, origin: ORIGIN, ...headers }).filter(
    ([, v]) => v !== "",
  );
  return raw(t, path, {
    method: "POST",
    headers: Object.fromEntries(all),
    body: new URLSearchParams(fields).toString(),
  });
}

export function csrfOf(html: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!m?.[1]) throw new Error("no CSRF field in the page");
  return m[1];
}

export async function signIn(t: TestApp): Promise<Browser> {
  const res = await postForm(t, "/admin/login", { token: ADMIN_TOKEN });
  expect(res.status).toBe(303);
  const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
  const get = (path: string) => raw(t, path, { headers: { cookie } });
  const csrf = csrfOf(await (await get("/admin/companies")).text());
  return {
    t,
    cookie,
    csrf,
    get,
    post: (path, fields, opts = {}) => {
      const token = opts.csrf === undefined ? csrf : opts.csrf;
      const body = token === null ? fields : { _csrf: token, ...fields };
      return postForm(t, path, body, { cookie, ...opts.headers });
    },
  };
}
