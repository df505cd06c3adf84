// GET /: where a person who opens the address the log prints goes next (decisions §19): a small
// Russian page linking the admin pages and the API reference, under the pages' headers.
import { Elysia } from "elysia";
import { routeDoc } from "../http/docs";
import { securityHeaders } from "../http/security-headers";

const HOME = `<!doctype html>
<html lang="ru">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc</title>
</head>
<body>
<h1>svc</h1>
<p>Банковские выписки для учётных систем (REST API) и данные банка для ИИ-агентов (MCP).</p>
<ul>
<li><a href="/admin">Панель оператора</a> — компании, счета, токены, выписки, журнал аудита</li>
<li><a href="/docs">Документация API</a> (описание OpenAPI: <a href="/docs/json">/docs/json</a>)</li>
</ul>
</body>
</html>
`;

export function homePage() {
  return new Elysia({ name: "home-page" }).get(
    "/",
    ({ set }) => {
      Object.assign(set.headers, securityHeaders(), { "content-type": "text/html; charset=utf-8" });
      return HOME;
    },
    {
      detail: routeDoc("service", "A small page (Russian, HTML) linking the admin pages and /docs", [], {
        security: "none",
        success: { 200: "text/html" },
      }),
    },
  );
}
