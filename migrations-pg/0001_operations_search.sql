-- Search over operations, as the SQLite read model searches them (FTS5 unicode61 with
-- remove_diacritics 2 over purpose, payer_name, payee_name and doc_number; ё read as е; every word
-- of the query a prefix). The cluster's locale must not matter, and under the C locale lower(),
-- to_tsvector and pg_trgm leave Cyrillic alone, so the folding and the word split are spelled out
-- character by character. Covered: Basic Latin, Latin-1, Latin Extended-A and Cyrillic
-- U+0400-U+045F, folded exactly as unicode61 folds them; any other character separates words.

-- Lower case and diacritics removed. translate() costs a scan of its list per character, so the
-- long list of rarely seen letters runs only on text that has one; lower() under "C" does ASCII.
CREATE FUNCTION svc_fold(t text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN
  translate(lower(
    CASE WHEN t COLLATE "C" ~ '[µÀ-ÖØ-öø-ſЀЂ-Џ]'
      THEN translate(t,
        'µÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞàáâãäåçèéêëìíîïñòóôõöùúûüýÿĀāĂăĄąĆćĈĉĊċČčĎďĐĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĦĨĩĪīĬĭĮįİĲĴĵĶķĹĺĻļĽľĿŁŃńŅņŇňŊŌōŎŏŐőŒŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŦŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽžſЀЂЃЄЅІЇЈЉЊЋЌЍЎЏ',
        'μaaaaaaæceeeeiiiiðnoooooøuuuuyþaaaaaaceeeeiiiinooooouuuuyyaaaaaaccccccccddđeeeeeeeeeegggggggghhħiiiiiiiiiĳjjkkllllllŀłnnnnnnŋooooooœrrrrrrssssssssttttŧuuuuuuuuuuuuwwyyyzzzzzzsѐђѓєѕіїјљњћќѝўџ')
      ELSE t END COLLATE "C"),
    'АБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯё',
    'абвгдеежзийклмнопрстуфхцчшщъыьэюяе');
--> statement-breakpoint
-- The folded words of a text: what unicode61 keeps as token characters, in the covered ranges.
CREATE FUNCTION svc_words(t text) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN
  array_remove(regexp_split_to_array(svc_fold(t) COLLATE "C", '[^0-9a-zª²³¹º¼½¾ßæðøþđħıĳĸŀłŉŋœŧμа-яѐ-џ]+'), '');
--> statement-breakpoint
-- The searched words of an operation with their positions, so that a query word the split cuts in
-- two ("счёт-фактура", "12.10.2024") matches as a phrase, as in FTS5. Each column starts 4096
-- positions after the previous one: a phrase never spans two columns.
CREATE FUNCTION svc_search_vector(purpose text, payer_name text, payee_name text, doc_number text)
RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN
  coalesce((SELECT string_agg(quote_literal(w.word) || ':' || (c.base + w.n - 1), ' ')::tsvector
              FROM (VALUES (1, purpose), (4097, payer_name), (8193, payee_name), (12289, doc_number)) AS c(base, t)
              CROSS JOIN LATERAL unnest(svc_words(coalesce(c.t, ''))) WITH ORDINALITY AS w(word, n)),
           ''::tsvector);
--> statement-breakpoint
-- The words of an operation under its day ('2024-10-02/оплата'), for the GIN index: a lookup for a
-- few days reads only those days' entries, however common the word is elsewhere.
CREATE FUNCTION svc_search_days(doc_date text, search tsvector) RETURNS tsvector
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN
  array_to_tsvector(ARRAY(SELECT doc_date || '/' || l FROM unnest(tsvector_to_array(search)) AS l));
--> statement-breakpoint
-- The query over `search`: each query word's folded parts as a phrase whose last part is a prefix,
-- all words ANDed. NULL (nothing matches) when a word has no part left.
CREATE FUNCTION svc_search_query(words text[]) RETURNS tsquery
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN
  (SELECT CASE WHEN bool_and(p.phrase IS NOT NULL) THEN string_agg('(' || p.phrase || ')', ' & ')::tsquery END
     FROM unnest(words) AS q(word)
     CROSS JOIN LATERAL (
       SELECT string_agg(quote_literal(w.part) || CASE WHEN w.n = cardinality(svc_words(q.word)) THEN ':*' ELSE '' END,
                         ' <-> ' ORDER BY w.n) AS phrase
         FROM unnest(svc_words(q.word)) WITH ORDINALITY AS w(part, n)) AS p);
--> statement-breakpoint
-- The query over svc_search_days for the given days: every part of every word (the last part of a
-- word a prefix) on one of the days. It finds a superset of the phrase query; `search` decides.
CREATE FUNCTION svc_search_days_query(words text[], days text[]) RETURNS tsquery
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN
  (SELECT CASE WHEN bool_and(p.parts IS NOT NULL) THEN string_agg(p.parts, ' & ')::tsquery END
     FROM unnest(words) AS q(word)
     CROSS JOIN LATERAL (
       SELECT string_agg('(' || (SELECT string_agg(quote_literal(d.day || '/' || w.part)
                                                   || CASE WHEN w.n = cardinality(svc_words(q.word)) THEN ':*' ELSE '' END, ' | ')
                                   FROM unnest(days) AS d(day)) || ')', ' & ') AS parts
         FROM unnest(svc_words(q.word)) WITH ORDINALITY AS w(part, n)) AS p);
--> statement-breakpoint
ALTER TABLE "operations" ADD COLUMN "search" tsvector
  GENERATED ALWAYS AS (svc_search_vector("purpose", "payer_name", "payee_name", "doc_number")) STORED;
--> statement-breakpoint
CREATE INDEX "operations_search_days_idx" ON "operations" USING gin (svc_search_days("doc_date", "search"));
