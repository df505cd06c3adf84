// An account at a bank that speaks 1C:DirectBank (decisions §18): the bank's settings file, uploaded
// or pasted, and the statement-only login; the bank is asked to log on before anything is stored.
import { ApiError } from "../../../core/errors";
import type { CompanyView } from "../../model";
import { type FormPage, nonEmpty, type PageKit } from "../kit";
import { attr, type FormValues, PostForm } from "../layout";
import { operatorMessage } from "../messages";
import { type PageRoute, pageDoc, post } from "../page-route";
import { AliasField, CompanyField, NumberAndBikFields } from "./account-fields";

/** A settings file is a few kilobytes; certificates included, well under this. */
const SETTINGS_FILE_LIMIT = 256 * 1024;

export function DirectBankAccountForm({
  companies,
  csrf,
  values,
}: {
  companies: CompanyView[];
  csrf: string;
  values: FormValues;
}) {
  return (
    <details open={values.bank === "directbank" ? true : undefined}>
      <summary>Счёт в банке через 1С:ДиректБанк (выписки по отдельному логину)</summary>
      <PostForm action="/admin/accounts/directbank" csrf={csrf} class="grid" enctype="multipart/form-data">
        <CompanyField companies={companies} values={values} />
        <NumberAndBikFields values={values} />
        <AliasField values={values} />
        <label>
          Файл настроек обмена из банка (XML)
          <input name="settings_file" type="file" accept=".xml,application/xml,text/xml" />
        </label>
        <label>
          …или его текст
          <textarea name="settings" rows="2"></textarea>
        </label>
        <label>
          Логин выписок (пусто: из файла настроек)
          <input name="login" autocomplete="off" value={attr(values.login)} />
        </label>
        <label>
          Пароль выписок
          <input name="password" type="password" required autocomplete="new-password" />
        </label>
        <div>
          <button type="submit">Проверить вход и добавить счёт</button>
        </div>
      </PostForm>
    </details>
  );
}

export function directbankAccountRoute(kit: PageKit, accountsPage: FormPage): PageRoute {
  const { accounts } = kit.deps.admin;
  return post(
    "/admin/accounts/directbank",
    kit.uploadAction(SETTINGS_FILE_LIMIT, async (session, form, files, ctx) => {
      const file = files.get("settings_file");
      const settings =
        file && file.bytes.byteLength > 0 ? new TextDecoder().decode(file.bytes) : form.settings;
      const input = {
        company_id: form.company_id ?? "",
        bank: "directbank",
        account_number: (form.account_number ?? "").trim(),
        bik: (form.bik ?? "").trim(),
        alias: nonEmpty(form.alias?.trim()),
        credentials: {
          kind: "directbank",
          settings: nonEmpty(settings?.trim()),
          login: nonEmpty(form.login?.trim()),
          password: form.password ?? "",
        },
      };
      // What was typed comes back with the message; the password and the file never do.
      const { password: _secret, settings: _file, ...typed } = form;
      try {
        const account = await accounts.createVerified(input, kit.actorOf(ctx));
        return kit.flashThen(
          session,
          `Счёт ${account.alias} (${account.account_number_masked}) добавлен`,
          "/admin/accounts",
        );
      } catch (error) {
        if (error instanceof ApiError)
          return accountsPage(session, error.status, operatorMessage(error.message), {
            ...typed,
            bank: "directbank",
          });
        throw error;
      }
    }),
    {
      bodyPolicy: { kind: "stream", limit: SETTINGS_FILE_LIMIT },
      detail: pageDoc("Admin pages: add an account at a DirectBank bank", "form"),
    },
  );
}
