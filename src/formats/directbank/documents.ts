// The documents of 1C:DirectBank that a statement exchange uses, built and parsed: Settings (06),
// Probe (05), StatementRequest (14), StatusPacketNotice (01) and Statement (15). Amounts are
// kopecks here and decimal roubles in the XML; dates are the XML's own text (xsd:dateTime and
// xsd:date), which the caller writes in its business time zone.
import { formatKopecks, parseSignedAmountToKopecks } from "../money";
// ВидОплаты (field 18) per document type, as the 1C export writes it.
import { ONEC_PAYMENT_KIND_CODES } from "../onec/fields";
import type { BudgetFields, DocType, Party, StatementOperation } from "../types";
import {
  type BankParty,
  bankAttrs,
  type CustomerParty,
  customerAttrs,
  type Participant,
  parseBank,
  parseCustomer,
  parseParticipant,
  participantElement,
} from "./transport";
import {
  attr,
  buildFragment,
  buildXml,
  child,
  children,
  childText,
  DirectBankFormatError,
  el,
  leaf,
  optionalChild,
  optionalText,
  parseRoot,
  requiredAttr,
  type XmlElement,
  type XmlNode,
} from "./xml";

/** The standard's document kind codes that svc's statement exchange uses. */
export const DOCKIND = {
  statusPacketNotice: "01",
  probe: "05",
  settings: "06",
  statementRequest: "14",
  statement: "15",
} as const;

/** The standard's codes of the documents inside a statement, per svc's document type. */
const STATEMENT_DOC_KINDS: Readonly<Record<DocType, { code: string; element: string }>> = {
  payment_order: { code: "10", element: "PayDocRu" },
  payment_request: { code: "11", element: "PayRequest" },
  collection_order: { code: "12", element: "CollectionOrder" },
  memorial_order: { code: "16", element: "MemOrder" },
  payment_warrant: { code: "17", element: "PaymentOrder" },
  bank_order: { code: "18", element: "BankOrder" },
};

/** What every document carries on its root. */
export interface DocumentHeader {
  id: string;
  formatVersion: string;
  /** xsd:dateTime */
  creationDate: string;
  userAgent?: string;
}

const headerAttrs = (h: DocumentHeader) => ({
  id: h.id,
  formatVersion: h.formatVersion,
  creationDate: h.creationDate,
  userAgent: h.userAgent,
});

function parseHeader(node: XmlNode, code: string): DocumentHeader {
  return {
    id: requiredAttr(node, "id", code),
    formatVersion: requiredAttr(node, "formatVersion", code),
    creationDate: requiredAttr(node, "creationDate", code),
    userAgent: attr(node, "userAgent"),
  };
}

const DOC = "2201";

// ---------------------------------------------------------------------------------------------
// Settings (06)

export interface SettingsDocument extends DocumentHeader {
  sender: BankParty;
  recipient: CustomerParty;
  customerId: string;
  bankServerAddress: string;
  /** The format version the exchange uses. */
  version: string;
  compress: boolean;
  /** Login by password: the user name 1C asks the password for. */
  user: string;
  /** The document kinds of the exchange, none of them signed. */
  docKinds: string[];
  /** The statement-only login of 1C's automatic statements (its user differs from `user`). */
  receiptStatement?: { login: string; instructions: string };
  /** Read only: the account numbers a bank's settings name beyond the schema (`Account` elements
   *  anywhere in Data, as some banks add them), and a customer id that is an account number. */
  accounts?: string[];
}

const ACCOUNT_NUMBER_RE = /^\d{20}$/;

/** Every 20-digit `Account` text below `node`, in document order. */
function accountNumbersIn(node: XmlNode, out: string[] = []): string[] {
  for (const [name, value] of Object.entries(node)) {
    if (!Array.isArray(value)) continue;
    for (const child of value) {
      const text = typeof child["#text"] === "string" ? child["#text"].trim() : "";
      if (name === "Account" && ACCOUNT_NUMBER_RE.test(text)) out.push(text);
      accountNumbersIn(child, out);
    }
  }
  return out;
}

export function buildSettings(s: SettingsDocument): string {
  return buildXml(
    el("Settings", headerAttrs(s), [
      el("Sender", bankAttrs(s.sender), []),
      el("Recipient", customerAttrs(s.recipient), []),
      el("Data", undefined, [
        el("CustomerID", undefined, s.customerId),
        el("BankServerAddress", undefined, s.bankServerAddress),
        el("FormatVersion", undefined, s.version),
        el("Encoding", undefined, "UTF-8"),
        el("Compress", undefined, s.compress ? "true" : "false"),
        el("Logon", undefined, [el("Login", undefined, [el("User", undefined, s.user.slice(0, 50))])]),
        ...s.docKinds.map((kind) => el("Document", { docKind: kind }, [])),
        s.receiptStatement
          ? el("ReceiptStatement", undefined, [
              el("Login", undefined, s.receiptStatement.login.slice(0, 50)),
              el("Instructions", undefined, s.receiptStatement.instructions),
            ])
          : undefined,
      ]),
    ]),
  );
}

export function parseSettings(xml: string): SettingsDocument {
  const { node } = parseRoot(xml, ["Settings"], DOC);
  const data = child(node, "Data", DOC);
  const login = optionalChild(child(data, "Logon", DOC), "Login");
  const receipt = optionalChild(data, "ReceiptStatement");
  const customerId = childText(data, "CustomerID", DOC);
  const named = [...(ACCOUNT_NUMBER_RE.test(customerId) ? [customerId] : []), ...accountNumbersIn(data)];
  return {
    ...parseHeader(node, DOC),
    sender: parseBank(child(node, "Sender", DOC), DOC),
    recipient: parseCustomer(child(node, "Recipient", DOC), DOC),
    customerId,
    bankServerAddress: childText(data, "BankServerAddress", DOC),
    version: childText(data, "FormatVersion", DOC),
    compress: optionalText(data, "Compress") === "true",
    user: login ? childText(login, "User", DOC) : "",
    docKinds: children(data, "Document").map((d) => requiredAttr(d, "docKind", DOC)),
    receiptStatement: receipt
      ? { login: childText(receipt, "Login", DOC), instructions: childText(receipt, "Instructions", DOC) }
      : undefined,
    accounts: [...new Set(named)],
  };
}

// ---------------------------------------------------------------------------------------------
// Probe (05)

export interface ProbeDocument extends DocumentHeader {
  sender: CustomerParty;
  recipient: BankParty;
}

export function buildProbe(p: ProbeDocument): string {
  return buildXml(
    el("Probe", headerAttrs(p), [
      el("Sender", customerAttrs(p.sender), []),
      el("Recipient", bankAttrs(p.recipient), []),
    ]),
  );
}

export function parseProbe(xml: string): ProbeDocument {
  const { node } = parseRoot(xml, ["Probe"], DOC);
  return {
    ...parseHeader(node, DOC),
    sender: parseCustomer(child(node, "Sender", DOC), DOC),
    recipient: parseBank(child(node, "Recipient", DOC), DOC),
  };
}

// ---------------------------------------------------------------------------------------------
// StatementRequest (14)

/** StatementType: 0 final statement, 1 interim, 2 the current balance. */
export type StatementKind = "0" | "1" | "2";

export interface StatementRequestDocument extends DocumentHeader {
  sender: CustomerParty;
  recipient: BankParty;
  statementType: StatementKind;
  /** xsd:dateTime */
  dateFrom: string;
  /** xsd:dateTime */
  dateTo: string;
  account: string;
  bank: { bic: string; name?: string };
}

export function buildStatementRequest(r: StatementRequestDocument): string {
  return buildXml(
    el("StatementRequest", headerAttrs(r), [
      el("Sender", customerAttrs(r.sender), []),
      el("Recipient", bankAttrs(r.recipient), []),
      el("Data", undefined, [
        el("StatementType", undefined, r.statementType),
        el("DateFrom", undefined, r.dateFrom),
        el("DateTo", undefined, r.dateTo),
        el("Account", undefined, r.account),
        el("Bank", undefined, [el("BIC", undefined, r.bank.bic), leaf("Name", r.bank.name)]),
      ]),
    ]),
  );
}

const DATE_TIME_RE = /^(\d{4}-\d{2}-\d{2})(T\d{2}:\d{2}:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$/;

/** The calendar date of an xsd:dateTime (or xsd:date) as written: "2019-04-21T00:00:00" → "2019-04-21". */
export function dateOf(value: string): string | null {
  const m = DATE_TIME_RE.exec(value.trim());
  return m ? m[1]! : null;
}

/** A statement request; a field the standard requires that is missing or malformed throws 2205. */
export function parseStatementRequest(xml: string): StatementRequestDocument {
  const { node } = parseRoot(xml, ["StatementRequest"], DOC);
  const data = child(node, "Data", DOC);
  const statementType = childText(data, "StatementType", DOC);
  if (statementType !== "0" && statementType !== "1" && statementType !== "2") {
    throw new DirectBankFormatError("2205", `Неизвестный тип выписки ${statementType}`);
  }
  const dateFrom = childText(data, "DateFrom", DOC);
  const dateTo = childText(data, "DateTo", DOC);
  if (dateOf(dateFrom) === null || dateOf(dateTo) === null) {
    throw new DirectBankFormatError("2205", "DateFrom и DateTo: ожидается дата и время xsd:dateTime");
  }
  const bank = child(data, "Bank", DOC);
  return {
    ...parseHeader(node, DOC),
    sender: parseCustomer(child(node, "Sender", DOC), DOC),
    recipient: parseBank(child(node, "Recipient", DOC), DOC),
    statementType,
    dateFrom,
    dateTo,
    account: childText(data, "Account", DOC),
    bank: { bic: childText(bank, "BIC", DOC), name: optionalText(bank, "Name") },
  };
}

// ---------------------------------------------------------------------------------------------
// StatusPacketNotice (01)

export type NoticeResult =
  | { status: { code: string; name?: string; moreInfo?: string } }
  | { error: { code: string; description: string; moreInfo?: string } };

export interface StatusPacketNoticeDocument extends DocumentHeader {
  sender: Participant;
  recipient: Participant;
  /** The id the bank answered SendPack with. */
  receivedId: string;
  result: NoticeResult;
  /** The id of the packet the notice is about, as its sender gave it. */
  extIdPacket?: string;
}

export function buildStatusPacketNotice(n: StatusPacketNoticeDocument): string {
  const result =
    "status" in n.result
      ? el("Status", undefined, [
          el("Code", undefined, n.result.status.code),
          leaf("Name", n.result.status.name?.slice(0, 25)),
          leaf("MoreInfo", n.result.status.moreInfo),
        ])
      : el("Error", undefined, [
          el("Code", undefined, n.result.error.code),
          el("Description", undefined, n.result.error.description.slice(0, 255)),
          leaf("MoreInfo", n.result.error.moreInfo),
        ]);
  return buildXml(
    el("StatusPacketNotice", headerAttrs(n), [
      participantElement("Sender", n.sender),
      participantElement("Recipient", n.recipient),
      el("IDResultSuccessResponse", undefined, n.receivedId),
      el("Result", undefined, [result]),
      leaf("ExtIDPacket", n.extIdPacket),
    ]),
  );
}

export function parseStatusPacketNotice(xml: string): StatusPacketNoticeDocument {
  const { node } = parseRoot(xml, ["StatusPacketNotice"], DOC);
  const resultNode = child(node, "Result", DOC);
  const status = optionalChild(resultNode, "Status");
  const error = optionalChild(resultNode, "Error");
  let result: NoticeResult;
  if (status) {
    result = {
      status: {
        code: childText(status, "Code", DOC),
        name: optionalText(status, "Name"),
        moreInfo: optionalText(status, "MoreInfo"),
      },
    };
  } else if (error) {
    result = {
      error: {
        code: childText(error, "Code", DOC),
        description: childText(error, "Description", DOC),
        moreInfo: optionalText(error, "MoreInfo"),
      },
    };
  } else {
    throw new DirectBankFormatError(DOC, "Нет результата обработки");
  }
  return {
    ...parseHeader(node, DOC),
    sender: parseParticipant(child(node, "Sender", DOC), DOC),
    recipient: parseParticipant(child(node, "Recipient", DOC), DOC),
    receivedId: childText(node, "IDResultSuccessResponse", DOC),
    result,
    extIdPacket: optionalText(node, "ExtIDPacket"),
  };
}

// ---------------------------------------------------------------------------------------------
// Statement (15)

export interface BankDetails {
  bic: string;
  name?: string;
  corrAccount?: string;
}

export interface StatementDocument extends DocumentHeader {
  sender: BankParty;
  recipient: CustomerParty;
  statementType: StatementKind;
  /** xsd:dateTime; absent for a current balance */
  dateFrom?: string;
  /** xsd:dateTime */
  dateTo: string;
  account: string;
  bank: BankDetails;
  /** Kopecks; the four are absent from a current balance except the closing one. */
  openingBalance?: number;
  totalDebits?: number;
  totalCredits?: number;
  closingBalance: number;
  operations: StatementOperation[];
  /** The id of the StatementRequest answered. */
  extIdStatementRequest?: string;
}

const BIC_RE = /^\d{9}$/;
const fits = (value: string | null | undefined, min: number, max: number) =>
  value !== null && value !== undefined && value.length >= min && value.length <= max ? value : undefined;

/** A bank's details; a BIC that is not nine digits (a file may lack it) is written as zeros, since
 *  the schema requires one. */
function bankElement(name: string, b: BankDetails): XmlElement {
  return el(name, undefined, [
    el("BIC", undefined, BIC_RE.test(b.bic) ? b.bic : "000000000"),
    leaf("Name", b.name?.slice(0, 160)),
    leaf("CorrespAcc", fits(b.corrAccount, 1, 20)),
  ]);
}

function partyElement(name: string, p: Party): XmlElement {
  return el(name, undefined, [
    el("Name", undefined, p.name),
    leaf("INN", p.inn),
    leaf("KPP", fits(p.kpp, 1, 9)),
    leaf("Account", fits(p.account, 1, 20)),
    bankElement("Bank", { bic: p.bank_bik, name: p.bank_name, corrAccount: p.bank_corr_account }),
  ]);
}

/** Fields 101, 104–110 where svc has them and they fit the schema's lengths. */
function budgetElement(b: BudgetFields | null | undefined): XmlElement | undefined {
  if (!b) return undefined;
  const children = [
    leaf("DrawerStatus", fits(b.originator_status, 1, 2)),
    leaf("CBC", fits(b.kbk, 1, 20)),
    leaf("OKTMO", fits(b.oktmo, 1, 11)),
    leaf("Reason", fits(b.basis, 1, 2)),
    leaf("TaxPeriod", fits(b.period, 1, 10)),
    leaf("DocNo", fits(b.number, 1, 15)),
    leaf("DocDate", fits(b.date, 1, 10)),
    leaf("PayType", fits(b.type, 1, 2)),
  ];
  return children.some(Boolean) ? el("BudgetPaymentInfo", undefined, children) : undefined;
}

/** PaymentDataType: the common fields of payment documents, in the schema's order. A purpose is
 *  at most 210 characters in the schema (as on paper); a longer one is cut there. */
function paymentData(op: StatementOperation): XmlElement[] {
  return [
    el("DocNo", undefined, op.doc_number),
    el("DocDate", undefined, op.doc_date),
    el("Sum", undefined, formatKopecks(op.amount)),
    partyElement("Payer", op.payer),
    partyElement("Payee", op.payee),
    el("TransitionKind", undefined, ONEC_PAYMENT_KIND_CODES[op.doc_type]),
    leaf("Priority", fits(op.priority, 1, 1)),
    leaf("Code", fits(op.uin, 1, 25)),
    leaf("IncomeTypeCode", fits(op.purpose_code, 1, 1)),
    el("Purpose", undefined, op.purpose.replace(/\s*[\r\n]+\s*/g, " ").slice(0, 210)),
  ].filter((e): e is XmlElement => e !== undefined);
}

function payDocBody(op: StatementOperation): XmlElement[] {
  switch (op.doc_type) {
    case "payment_order":
    case "collection_order":
    case "payment_warrant":
      return [...paymentData(op), budgetElement(op.budget)].filter((e): e is XmlElement => e !== undefined);
    case "payment_request":
      // Field 35 (the payment condition) is required here and svc keeps none: "1", accepted in advance.
      return [...paymentData(op), el("PaymentCondition", undefined, "1")];
    case "bank_order":
      return paymentData(op);
    case "memorial_order":
      return [
        el("DocNo", undefined, op.doc_number),
        el("DocDate", undefined, op.doc_date),
        el("AccountNameDebit", undefined, op.payer.name),
        leaf("AccountDebit", fits(op.payer.account, 1, 20)),
        el("Sum", undefined, formatKopecks(op.amount)),
        el("AccountNameCredit", undefined, op.payee.name),
        leaf("AccountCredit", fits(op.payee.account, 1, 20)),
        el("TransitionContent", undefined, op.purpose),
      ].filter((e): e is XmlElement => e !== undefined);
  }
}

function operationElement(op: StatementOperation): XmlElement {
  const kind = STATEMENT_DOC_KINDS[op.doc_type];
  return el("OperationInfo", undefined, [
    el("PayDoc", { id: op.operation_id, docKind: kind.code }, [el(kind.element, undefined, payDocBody(op))]),
    // DC: 1 debit, 2 credit (of the statement's account).
    el("DC", undefined, op.direction === "debit" ? "1" : "2"),
    el("Date", undefined, op.doc_date),
  ]);
}

/** The Statement's XML before its operations and after them, so that a caller can write the
 *  operations in between a page at a time. */
function statementXmlParts(s: Omit<StatementDocument, "operations">): { head: string; tail: string } {
  const marker = "@@OPERATIONS@@";
  const xml = buildXml(
    el("Statement", headerAttrs(s), [
      el("Sender", bankAttrs(s.sender), []),
      el("Recipient", customerAttrs(s.recipient), []),
      el("Data", undefined, [
        el("StatementType", undefined, s.statementType),
        leaf("DateFrom", s.dateFrom),
        el("DateTo", undefined, s.dateTo),
        el("Account", undefined, s.account),
        bankElement("Bank", s.bank),
        s.openingBalance === undefined
          ? undefined
          : el("OpeningBalance", undefined, formatKopecks(s.openingBalance)),
        s.totalDebits === undefined ? undefined : el("TotalDebits", undefined, formatKopecks(s.totalDebits)),
        s.totalCredits === undefined
          ? undefined
          : el("TotalCredits", undefined, formatKopecks(s.totalCredits)),
        el("ClosingBalance", undefined, formatKopecks(s.closingBalance)),
        { name: "Operations", text: marker },
      ]),
      leaf("ExtIDStatementRequest", s.extIdStatementRequest),
    ]),
  );
  const at = xml.indexOf(`<Operations>${marker}</Operations>`);
  return { head: xml.slice(0, at), tail: xml.slice(at + `<Operations>${marker}</Operations>`.length) };
}

/** The XML of some operations of a statement (see statementXmlParts). */
function statementOperationsXml(ops: readonly StatementOperation[]): string {
  return ops.map((op) => buildFragment(operationElement(op))).join("");
}

export function buildStatement(s: StatementDocument): string {
  const { head, tail } = statementXmlParts(s);
  return head + statementOperationsXml(s.operations) + tail;
}

const DOC_TYPE_BY_ELEMENT = new Map(
  Object.entries(STATEMENT_DOC_KINDS).map(([docType, k]) => [k.element, docType as DocType]),
);

function amount(node: XmlNode, name: string): number {
  const value = parseSignedAmountToKopecks(childText(node, name, DOC));
  if (value === null) throw new DirectBankFormatError("2205", `${name}: ожидается сумма`);
  return value;
}

function optionalAmount(node: XmlNode, name: string): number | undefined {
  return optionalChild(node, name) ? amount(node, name) : undefined;
}

function parseParty(node: XmlNode | undefined): Party {
  const bank = node ? optionalChild(node, "Bank") : undefined;
  return {
    name: optionalText(node, "Name") ?? "",
    inn: optionalText(node, "INN") ?? "",
    kpp: optionalText(node, "KPP") ?? "",
    account: optionalText(node, "Account") ?? "",
    bank_name: optionalText(bank, "Name") ?? "",
    bank_bik: optionalText(bank, "BIC") ?? "",
    bank_corr_account: optionalText(bank, "CorrespAcc") ?? "",
  };
}

function parseOperation(node: XmlNode, currency: string): StatementOperation {
  const payDoc = child(node, "PayDoc", DOC);
  const [element, body] =
    Object.entries(payDoc).find(([k, v]) => !k.startsWith("@_") && Array.isArray(v)) ?? [];
  const docType = element ? DOC_TYPE_BY_ELEMENT.get(element) : undefined;
  if (!docType || !Array.isArray(body)) {
    throw new DirectBankFormatError("2205", `Неизвестный вид документа в выписке: ${element ?? "—"}`);
  }
  const doc = body[0]!;
  const memorial = docType === "memorial_order";
  const budget = optionalChild(doc, "BudgetPaymentInfo");
  return {
    operation_id: requiredAttr(payDoc, "id", DOC),
    direction: childText(node, "DC", DOC) === "1" ? "debit" : "credit",
    doc_type: docType,
    doc_number: optionalText(doc, "DocNo") ?? "",
    // A bank may write the date with its zone ("2021-05-11Z"): the calendar date is kept.
    doc_date: dateOf(optionalText(doc, "DocDate") ?? childText(node, "Date", DOC)) ?? "",
    amount: amount(doc, "Sum"),
    currency,
    purpose: (memorial ? optionalText(doc, "TransitionContent") : optionalText(doc, "Purpose")) ?? "",
    payer: memorial
      ? {
          ...parseParty(undefined),
          name: optionalText(doc, "AccountNameDebit") ?? "",
          account: optionalText(doc, "AccountDebit") ?? "",
        }
      : parseParty(optionalChild(doc, "Payer")),
    payee: memorial
      ? {
          ...parseParty(undefined),
          name: optionalText(doc, "AccountNameCredit") ?? "",
          account: optionalText(doc, "AccountCredit") ?? "",
        }
      : parseParty(optionalChild(doc, "Payee")),
    uin: optionalText(doc, "Code") ?? null,
    purpose_code: optionalText(doc, "IncomeTypeCode") ?? null,
    priority: optionalText(doc, "Priority") ?? null,
    budget: budget
      ? {
          originator_status: optionalText(budget, "DrawerStatus"),
          kbk: optionalText(budget, "CBC"),
          oktmo: optionalText(budget, "OKTMO"),
          basis: optionalText(budget, "Reason"),
          period: optionalText(budget, "TaxPeriod"),
          number: optionalText(budget, "DocNo"),
          date: optionalText(budget, "DocDate"),
          type: optionalText(budget, "PayType"),
        }
      : null,
  };
}

/** A bank's statement; operations in the document's order, amounts in kopecks, `currency` given
 *  (the document names none: a rouble account's). */
export function parseStatement(xml: string, currency = "RUB"): StatementDocument {
  const { node } = parseRoot(xml, ["Statement"], DOC);
  const data = child(node, "Data", DOC);
  const statementType = childText(data, "StatementType", DOC);
  if (statementType !== "0" && statementType !== "1" && statementType !== "2") {
    throw new DirectBankFormatError("2205", `Неизвестный тип выписки ${statementType}`);
  }
  const bank = child(data, "Bank", DOC);
  return {
    ...parseHeader(node, DOC),
    sender: parseBank(child(node, "Sender", DOC), DOC),
    recipient: parseCustomer(child(node, "Recipient", DOC), DOC),
    statementType,
    dateFrom: optionalText(data, "DateFrom"),
    dateTo: childText(data, "DateTo", DOC),
    account: childText(data, "Account", DOC),
    bank: {
      bic: childText(bank, "BIC", DOC),
      name: optionalText(bank, "Name"),
      corrAccount: optionalText(bank, "CorrespAcc"),
    },
    openingBalance: optionalAmount(data, "OpeningBalance"),
    totalDebits: optionalAmount(data, "TotalDebits"),
    totalCredits: optionalAmount(data, "TotalCredits"),
    closingBalance: amount(data, "ClosingBalance"),
    operations: children(data, "OperationInfo").map((op) => parseOperation(op, currency)),
    extIdStatementRequest: optionalText(node, "ExtIDStatementRequest"),
  };
}
