// Companies: created (checked, audited) and listed.
import { newId } from "../core/clock";
import { validationError } from "../core/errors";
import { requireWellFormed } from "../core/text";
import type { CompanyRepository, CompanyRow } from "../db/repos/accounts";
import { isValidInn, isValidKpp } from "../formats/validators";
import type { AdminActor, AdminAreaDeps } from "./audit";
import type { CompanyView, CreateCompanyInput } from "./model";

export interface AdminCompaniesDeps extends AdminAreaDeps {
  companies: CompanyRepository;
}

export class AdminCompanies {
  constructor(private readonly deps: AdminCompaniesDeps) {}

  create(input: CreateCompanyInput, actor: AdminActor = {}): CompanyView {
    const name = requireWellFormed("name", input.name.trim());
    if (name.length === 0 || name.length > 256)
      throw validationError("name", "Название: от 1 до 256 символов");
    if (!isValidInn(input.inn)) throw validationError("inn", "Неверный ИНН (формат или контрольная сумма)");
    const kpp = input.kpp ?? null;
    if (kpp !== null && !isValidKpp(kpp)) throw validationError("kpp", "Неверный КПП");
    const row: CompanyRow = {
      id: newId(),
      name,
      inn: input.inn,
      kpp,
      createdAt: this.deps.clock.now().toISOString(),
    };
    this.deps.atomically(() => {
      this.deps.companies.insert(row);
      this.deps.audit.record("admin.company.create", row.id, actor, { name, inn: input.inn });
    });
    return companyView(row);
  }

  list(): CompanyView[] {
    return this.deps.companies.list().map(companyView);
  }
}

function companyView(row: CompanyRow): CompanyView {
  return { company_id: row.id, name: row.name, inn: row.inn, kpp: row.kpp, created_at: row.createdAt };
}
