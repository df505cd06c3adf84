import { Type } from "@sinclair/typebox";
import { ApiError } from "../../core/errors";
import { oneLine } from "../answer-text";
import { CompanySchema } from "../views";
import { UNTRUSTED } from "./common";
import type { ToolDefinition } from "./registry";

const input = Type.Object({}, { additionalProperties: false });
const output = Type.Object({ companies: Type.Array(CompanySchema) });

export const listCompaniesTool: ToolDefinition<typeof input, typeof output> = {
  name: "list_companies",
  title: "List companies",
  description:
    "Returns the company this token works for (always exactly one): company_id, name, INN and KPP. " +
    `Takes no arguments. Read-only. ${UNTRUSTED}`,
  inputSchema: input,
  outputSchema: output,
  text: (out) =>
    out.companies
      .map(
        (c) =>
          `Компания: ${oneLine(c.name)} | ИНН ${c.inn} | КПП ${c.kpp ?? "—"} | company_id ${c.company_id}`,
      )
      .join("\n"),
  handler(_args, { principal }, { read }) {
    const company = read.company(principal.companyId);
    if (!company) throw new ApiError("not_found", "Компания не найдена");
    return { companies: [company] };
  },
};
