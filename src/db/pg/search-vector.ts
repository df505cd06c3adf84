// The words PostgreSQL's search over operations indexes (migrations-pg 0004: svc_fold, svc_words,
// svc_search_vector), computed here as operations are stored: in PostgreSQL those functions cost
// about 100 µs an operation (regular expressions and translate() over four columns), a third of
// storing one. The same folding character for character, the same word split and positions; the
// database computes it itself for any row stored without it (migrations-pg 0010), and
// test/db/pg-search-vector.test.ts holds the two equal.

// svc_fold: diacritics removed and letters lower-cased (translate, lower() of ASCII under "C",
// translate), character by character.
const FOLD_FROM =
  "µÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞàáâãäåçèéêëìíîïñòóôõöùúûüýÿĀāĂăĄąĆćĈĉĊċČčĎďĐĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĦĨĩĪīĬĭĮįİĲĴĵĶķĹĺĻļĽľĿŁŃńŅņŇňŊŌōŎŏŐőŒŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŦŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽžſЀЂЃЄЅІЇЈЉЊЋЌЍЎЏ";
const FOLD_TO =
  "μaaaaaaæceeeeiiiiðnoooooøuuuuyþaaaaaaceeeeiiiinooooouuuuyyaaaaaaccccccccddđeeeeeeeeeegggggggghhħiiiiiiiiiĳjjkkllllllŀłnnnnnnŋooooooœrrrrrrssssssssttttŧuuuuuuuuuuuuwwyyyzzzzzzsѐђѓєѕіїјљњћќѝўџ";
const CYRILLIC_FROM = "АБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯё";
const CYRILLIC_TO = "абвгдеежзийклмнопрстуфхцчшщъыьэюяе";

function pairs(from: string, to: string): [string, string][] {
  const f = Array.from(from);
  const t = Array.from(to);
  return f.map((c, i) => [c, t[i]!]);
}

const FIRST = new Map(pairs(FOLD_FROM, FOLD_TO));
const LAST = new Map(pairs(CYRILLIC_FROM, CYRILLIC_TO));

function fold(text: string): string {
  let out = "";
  for (const c of text) {
    let f = FIRST.get(c) ?? c;
    if (f >= "A" && f <= "Z") f = f.toLowerCase();
    out += LAST.get(f) ?? f;
  }
  return out;
}

/** svc_words: what unicode61 keeps as token characters, in the covered ranges. */
const SEPARATORS = /[^0-9a-zª²³¹º¼½¾ßæðøþđħıĳĸŀłŉŋœŧμа-яѐ-џ]+/u;

/** The folded words of a text as svc_words (and, over the covered characters, FTS5) gives them. */
export function words(text: string | null): string[] {
  if (text === null || text === "") return [];
  return fold(text)
    .split(SEPARATORS)
    .filter((word) => word !== "");
}

/** Each column's words start 4096 positions after the previous column's (a phrase never spans two). */
const COLUMN_BASES = [1, 4097, 8193, 12289] as const;

/**
 * svc_search_vector(purpose, payer_name, payee_name, doc_number) as tsvector text ('word':position
 * …), for a `?::tsvector` parameter. Words hold no quote or backslash (the split removes them).
 */
export function searchVectorText(
  purpose: string | null,
  payerName: string | null,
  payeeName: string | null,
  docNumber: string | null,
): string {
  const parts: string[] = [];
  [purpose, payerName, payeeName, docNumber].forEach((text, column) => {
    words(text).forEach((word, i) => {
      parts.push(`'${word}':${COLUMN_BASES[column]! + i}`);
    });
  });
  return parts.join(" ");
}
