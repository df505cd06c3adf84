// The 1C client-bank exchange format (1CClientBankExchange, versions 1.02 and 1.03) as the code
// uses it: one codec for statement exports, statement imports and payment uploads. Explicit names.

export { encodeCp1251, OneCDocumentEncoder } from "./encoder";
export { ONEC_DOC_KINDS, ONEC_DOCUMENT_FIELD_ORDER, ONEC_PAYMENT_KIND_CODES, onecPartyKeys } from "./fields";
export {
  accountSectionBalances,
  decodeOneC,
  documentToOperation,
  type OneCAccountBalances,
  type OneCAccountSection,
  type OneCDocument,
  type OneCField,
  type OneCFields,
  type OneCFile,
  type OneCOperation,
  OneCParseError,
  oneCEncoding,
  parseOneC,
  purposeFromFields,
  savedAsUtf8,
  UTF8_FILE_MESSAGE,
} from "./reader";
export {
  ONEC_PARTY_KEYS,
  type OneCFieldSink,
  type OneCStatementMeta,
  type OneCStatementTotals,
  oneCStatement,
  oneCStatementDocument,
  oneCStatementFooter,
  oneCStatementHeader,
  purposeFields,
  statementTotals,
} from "./writer";
