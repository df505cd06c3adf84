// Shared by the export tests: a ready statement through the API, the json export's shape, and a
// reader of large 1C files a slice at a time.
import { accountSectionBalances, decodeOneC, encodeCp1251, parseOneC } from "../../src/formats/onec";
import { json, type TestApp } from "../helpers/app";

export const PATH = "/api/v1/integration/statements";

export async function readyStatement(
  t: TestApp,
  token: string,
  accountId: string,
  from: string,
  to: string,
  ext = "e",
) {
  const res = await t.request("POST", PATH, {
    token,
    body: { bank_account_id: accountId, external_id: ext, date_from: from, date_to: to },
  });
  const id = (await json(res)).statement_id as string;
  await t.services.poller.idle();
  await t.services.poller.tick();
  await t.services.poller.idle();
  return id;
}

export interface JsonExport {
  statement_id: string;
  bank_account_id: string;
  period_from: string;
  period_to: string;
  operations: {
    operation_id: string;
    direction: string;
    doc_type: string;
    doc_number: string;
    doc_date: string;
    amount: number;
    currency: string;
    purpose: string;
    payer: { inn: string; name: string; account: string };
    payee: { inn: string; name: string; account: string };
  }[];
}

export const kop = (n: number) => Math.round(n * 100);

/**
 * A large exchange file read by the 1C reader a slice of documents at a time: each slice is the
 * file's header and account section, `size` documents and the end, decoded and parsed as a whole
 * file. Every document goes through the reader; only one slice is held as text and parsed at once.
 */
export function parseOneCInSlices(bytes: Uint8Array, size: number) {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const cp1251 = (text: string) => Buffer.from(encodeCp1251(text));
  const docEnd = cp1251("КонецДокумента\r\n");
  const firstDoc = buf.indexOf(cp1251("СекцияДокумент="));
  const end = buf.lastIndexOf(cp1251("КонецФайла"));
  const head = decodeOneC(buf.subarray(0, firstDoc));
  let documents = 0;
  let balances: ReturnType<typeof accountSectionBalances> | null = null;
  for (let from = firstDoc; from < end; ) {
    let to = from;
    for (let n = 0; n < size && to < end; n++) to = buf.indexOf(docEnd, to) + docEnd.length;
    const file = parseOneC(`${head}${decodeOneC(buf.subarray(from, to))}КонецФайла\r\n`);
    documents += file.documents.length;
    balances ??= accountSectionBalances(file.accounts[0]!);
    from = to;
    Bun.gc(true);
  }
  return { documents, balances: balances! };
}
