// The fields every new account's form asks for, whatever its bank: the company, the account's
// number and BIK, its alias (the general form and the DirectBank form share them).
import type { CompanyView } from "../../model";
import { attr, type FormValues, Options } from "../layout";

export function CompanyField({ companies, values }: { companies: CompanyView[]; values: FormValues }) {
  return (
    <label>
      Компания
      <select name="company_id" required>
        <Options
          items={companies.map((c) => [c.company_id, `${c.name} (ИНН ${c.inn})`])}
          selected={values.company_id}
        />
      </select>
    </label>
  );
}

export function NumberAndBikFields({ values }: { values: FormValues }) {
  return (
    <>
      <label>
        Номер счёта (20 цифр)
        <input
          name="account_number"
          required
          pattern="\d{20}"
          inputmode="numeric"
          value={attr(values.account_number)}
        />
      </label>
      <label>
        БИК (9 цифр)
        <input name="bik" required pattern="\d{9}" inputmode="numeric" value={attr(values.bik)} />
      </label>
    </>
  );
}

export function AliasField({ values }: { values: FormValues }) {
  return (
    <label>
      Псевдоним (по умолчанию последние 4 цифры)
      <input name="alias" pattern="[A-Za-z0-9_\-]{1,32}" value={attr(values.alias)} />
    </label>
  );
}
