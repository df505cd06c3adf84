// A bank login typed field by field: each bank kind lists the logins its adapter takes (what its
// checkCredentials accepts) and their fields; the form posts `login_kind` and the fields of that
// kind, which become the credentials object the services check. A bank kind with no entry here
// takes no login in the pages (the sandboxes, bank files).
import { validationError } from "../../../core/errors";
import type { FormValues } from "../layout";

interface LoginField {
  name: string;
  label: string;
  secret?: boolean;
}

interface LoginKind {
  /** `bank/kind`, the value of the form's `login_kind`. */
  id: string;
  bank: string;
  /** The credentials' `kind`. */
  kind: string;
  label: string;
  fields: LoginField[];
  /** Only a new login of an account: a new account at this bank has a form of its own. */
  replaceOnly?: true;
}

/** Tochka's two logins (banks/tochka/credentials.ts): a JWT key, or an OAuth application; a
 *  DirectBank bank's statement login (banks/directbank/login.ts) by its address and customer id
 *  (a new account gives the bank's settings file instead: accounts/directbank.tsx). */
const LOGIN_KINDS: LoginKind[] = [
  {
    id: "tochka/jwt",
    bank: "tochka",
    kind: "jwt",
    label: "Точка: JWT-ключ из интернет-банка",
    fields: [{ name: "token", label: "JWT-ключ", secret: true }],
  },
  {
    id: "tochka/oauth",
    bank: "tochka",
    kind: "oauth",
    label: "Точка: приложение OAuth (затем подтверждение в банке)",
    fields: [
      { name: "client_id", label: "Идентификатор приложения (client_id)" },
      { name: "client_secret", label: "Секрет приложения (client_secret)", secret: true },
    ],
  },
  {
    id: "directbank/login",
    bank: "directbank",
    kind: "directbank",
    label: "1С:ДиректБанк: вход для автоматической выписки",
    replaceOnly: true,
    fields: [
      { name: "url", label: "Адрес сервиса банка (из файла настроек)" },
      { name: "customer_id", label: "Идентификатор клиента в банке" },
      { name: "login", label: "Логин" },
      { name: "password", label: "Пароль", secret: true },
    ],
  },
];

const fieldName = (kind: LoginKind, field: LoginField) => `login_${kind.id.replace("/", "_")}_${field.name}`;

/**
 * The credentials the form's chosen login kind makes, for an account at `bank`; undefined when no
 * login is chosen. A login of another bank, or one with an empty field, is a validation_error.
 */
export function credentialsFromForm(form: FormValues, bank: string): Record<string, string> | undefined {
  const chosen = form.login_kind ?? "";
  if (chosen === "") return undefined;
  const kind = LOGIN_KINDS.find((k) => k.id === chosen);
  if (!kind) throw validationError("credentials", "Неизвестный способ доступа к банку");
  if (kind.bank !== bank)
    throw validationError("credentials", "Выбранный способ доступа — для другого банка");
  const credentials: Record<string, string> = { kind: kind.kind };
  for (const field of kind.fields) {
    const value = (form[fieldName(kind, field)] ?? "").trim();
    if (value === "") throw validationError("credentials", `Заполните поле «${field.label}»`);
    credentials[field.name] = value;
  }
  return credentials;
}

/** Whether any login can be typed for an account at `bank`. */
export const takesLogin = (bank: string) => LOGIN_KINDS.some((k) => k.bank === bank);

/**
 * The choice of a login and the fields of each kind (a fieldset per kind: the chosen one's fields
 * are read, the others ignored; works without scripts). `bank`: only that bank's kinds.
 */
export function BankLoginFields({ bank, selected }: { bank?: string; selected?: string }) {
  const kinds = LOGIN_KINDS.filter((k) => (bank === undefined ? !k.replaceOnly : k.bank === bank));
  return (
    <>
      <label>
        Доступ к банку
        <select name="login_kind">
          <option value="" selected={!selected}>
            {bank === undefined ? "без реквизитов (тестовый банк, файлы, песочница)" : "не менять"}
          </option>
          {kinds.map((k) => (
            <option value={k.id} selected={k.id === selected} safe>
              {k.label}
            </option>
          ))}
        </select>
      </label>
      {kinds.map((k) => (
        <fieldset class="login-kind" data-login-kind={k.id}>
          <legend safe>{k.label}</legend>
          {k.fields.map((f) => (
            <label>
              <span safe>{f.label}</span>
              <input name={fieldName(k, f)} type={f.secret ? "password" : "text"} autocomplete="off" />
            </label>
          ))}
        </fieldset>
      ))}
    </>
  );
}
