// The stylesheet and the one script of the admin pages, kept as strings so that the compiled
// binary carries them; served from /admin/assets/ (the CSP allows same-origin files only).

export const APP_CSS = `
:root { --fg: #1d2330; --muted: #5f6b7a; --line: #d9dee5; --bg: #f6f7f9; --card: #fff;
  --accent: #2456c9; --ok: #1f7a3d; --bad: #b3261e; --warn: #9a6700; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--fg); background: var(--bg); }
header.top { display: flex; align-items: center; gap: 24px; padding: 10px 24px;
  background: #1d2330; color: #fff; }
header.top .brand { font-weight: 600; letter-spacing: .02em; }
header.top nav { display: flex; gap: 4px; flex: 1; flex-wrap: wrap; }
header.top nav a { color: #cfd6e4; text-decoration: none; padding: 6px 10px; border-radius: 6px; }
header.top nav a:hover { background: #2c3446; color: #fff; }
header.top nav a.active { background: #3a4560; color: #fff; }
header.top form { margin: 0; }
main { max-width: 1280px; margin: 0 auto; padding: 20px 24px 48px; }
h1 { font-size: 22px; margin: 4px 0 16px; }
h2 { font-size: 17px; margin: 0 0 12px; }
section.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px;
  padding: 16px 18px; margin-bottom: 18px; overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.actions { white-space: nowrap; }
td.actions form.inline { display: block; margin-top: 4px; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
.muted { color: var(--muted); }
.small { font-size: 12px; }
form.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr)); gap: 10px 14px;
  align-items: end; }
form.grid .wide { grid-column: 1 / -1; }
label { display: flex; flex-direction: column; gap: 4px; font-size: 12.5px; color: var(--muted); }
label.check { flex-direction: row; align-items: center; gap: 6px; color: var(--fg); font-size: 14px; }
input, select, textarea { font: inherit; color: var(--fg); padding: 6px 8px; border: 1px solid var(--line);
  border-radius: 6px; background: #fff; }
textarea { min-height: 64px; }
/* A field in a table's cell (a login's form in the accounts list) takes the cell's width, not its
   longest option's. */
td select, td input:not([type="checkbox"]), td textarea { width: 100%; box-sizing: border-box; }
button, .button { font: inherit; padding: 6px 14px; border-radius: 6px; border: 1px solid var(--accent);
  background: var(--accent); color: #fff; cursor: pointer; text-decoration: none; display: inline-block; }
button.secondary, .button.secondary { background: #fff; color: var(--accent); }
button.danger { background: #fff; color: var(--bad); border-color: var(--bad); }
header.top button { background: transparent; border-color: #56627a; color: #cfd6e4; }
form.inline { display: inline; margin: 0; }
.flash { padding: 10px 14px; border-radius: 6px; margin-bottom: 14px; border: 1px solid; }
.flash.ok { background: #eaf6ee; border-color: #9fd1ae; color: var(--ok); }
.flash.error { background: #fdecea; border-color: #f0a9a3; color: var(--bad); }
.flash.warn { background: #fff7e0; border-color: #e8cf8f; color: var(--warn); }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; border: 1px solid var(--line); }
.badge.ok { color: var(--ok); border-color: #9fd1ae; background: #eaf6ee; }
.badge.bad { color: var(--bad); border-color: #f0a9a3; background: #fdecea; }
.badge.warn { color: var(--warn); border-color: #e8cf8f; background: #fff7e0; }
.secret { display: flex; gap: 8px; align-items: center; margin: 10px 0; }
.secret input { flex: 1; font-family: ui-monospace, monospace; font-size: 15px; background: #fffbe6; }
.pager { display: flex; gap: 10px; margin-top: 12px; }
.login { max-width: 420px; margin: 12vh auto; }
.login form { display: flex; flex-direction: column; gap: 12px; }
svg.chart { width: 100%; max-width: 960px; height: auto; display: block; }
svg.chart text { font: 11px system-ui, sans-serif; fill: #5f6b7a; }
svg.chart .grid { stroke: #e6e9ee; }
svg.chart .axis { stroke: #9aa4b2; }
details pre { white-space: pre-wrap; max-width: 480px; margin: 4px 0 0; }
/* An audit entry's arguments open over the row (to the left of their cell), not inside it: the
   table keeps its columns, and no word of the JSON is broken. */
td.args { position: relative; }
td.args details pre { position: absolute; right: 8px; z-index: 1; width: 480px; max-width: none;
  background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px;
  box-shadow: 0 4px 14px rgba(29, 35, 48, .15); }
.nowrap { white-space: nowrap; }
.strong { font-weight: 600; }
td { overflow-wrap: normal; word-break: normal; hyphens: manual; }
td.num.credit { color: var(--ok); }
form.stack { display: flex; flex-direction: column; gap: 8px; margin-top: 6px; }
fieldset.login-kind { border: 1px solid var(--line); border-radius: 6px; padding: 6px 10px 10px;
  display: flex; flex-direction: column; gap: 6px; min-width: 0; }
fieldset.login-kind[hidden] { display: none; }
fieldset.login-kind legend { font-size: 12px; color: var(--muted); }
form.grid fieldset.login-kind { grid-column: span 2; }
.balance .amount { font-weight: 600; white-space: nowrap; font-variant-numeric: tabular-nums; }
.balance form { display: block; margin-top: 4px; }
.small-button { padding: 2px 10px; font-size: 12.5px; }
.coverage .strip { display: flex; width: 270px; height: 16px; border: 1px solid var(--line);
  border-radius: 3px; overflow: hidden; }
.coverage .day { flex: 1 1 0; }
.day.covered { background: #4caf6a; }
.day.partial { background: #e8b53a; }
.day.missing { background: #eceff3; }
.coverage .small { margin: 2px 0 4px; }
#coverage .strip { width: 100%; max-width: 720px; height: 24px; }
.legend { display: flex; gap: 14px; flex-wrap: wrap; margin-top: 6px; }
.legend .swatch { display: inline-block; width: 10px; height: 10px; border: 1px solid var(--line);
  vertical-align: -1px; }
td.purpose { min-width: 260px; }
dl.details { display: grid; grid-template-columns: max-content 1fr; gap: 2px 10px; margin: 6px 0 0;
  font-size: 12.5px; }
dl.details dt { color: var(--muted); }
dl.details dd { margin: 0; }
`;

/** The copy button of the one-time token page, and the bank login form showing the fields of the
 *  chosen login only; the pages work without it. */
export const APP_JS = `
function showChosenLogin(select) {
  var form = select.form;
  if (!form) return;
  form.querySelectorAll("fieldset[data-login-kind]").forEach(function (fieldset) {
    fieldset.hidden = fieldset.getAttribute("data-login-kind") !== select.value;
  });
}
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll('select[name="login_kind"]').forEach(showChosenLogin);
});
document.addEventListener("change", function (event) {
  var target = event.target;
  if (target instanceof HTMLSelectElement && target.name === "login_kind") showChosenLogin(target);
});
document.addEventListener("click", function (event) {
  var button = event.target instanceof Element ? event.target.closest("[data-copy]") : null;
  if (!button) return;
  var field = document.getElementById(button.getAttribute("data-copy"));
  if (!field) return;
  var done = function () { button.textContent = "Скопировано"; };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(field.value).then(done, function () { field.select(); });
  } else {
    field.select();
    try { if (document.execCommand("copy")) done(); } catch (e) { /* the value stays selected */ }
  }
});
`;
