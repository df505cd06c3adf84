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
-- The bit length of a non-negative amount (0 for 0), -1 below zero: exact integer arithmetic.
CREATE FUNCTION svc_amount_bucket(amount bigint) RETURNS int
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE RETURN
  CASE WHEN amount < 0 THEN -1 ELSE length(ltrim(amount::bit(64)::text, '0')) END;
--> statement-breakpoint
-- The words of an operation under its day ('2024-10-02/оплата'), its counterparty's INN
-- ('2024-10-02#7707083893') and the binary magnitude of its amount ('2024-10-02$21': 2^20 to
-- 2^21 - 1 kopecks; '$0' zero, '$-1' below zero), for the GIN index: a lookup for a few days reads
-- only those days' entries, however common the word is elsewhere, and a word asked with a
-- counterparty or an amount range meets mostly operations that have them.
CREATE FUNCTION svc_search_days(doc_date text, counterparty_inn text, amount bigint, search tsvector)
RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN
  array_to_tsvector(ARRAY(SELECT doc_date || '/' || l FROM unnest(tsvector_to_array(search)) AS l)
                    || (doc_date || '#' || coalesce(counterparty_inn, ''))
                    || (doc_date || '$' || svc_amount_bucket(coalesce(amount, 0))));
--> statement-breakpoint
-- The query over `search`: each query word's folded parts as a phrase whose last part is a prefix,
-- all words ANDed. NULL (nothing matches) when a word has no part left. The two query functions
-- are PARALLEL UNSAFE on purpose: a search reads tens of rows, and the planner, which cannot
-- estimate a computed tsquery, would otherwise start parallel workers that take longer to launch
-- (about 10 ms) than the whole search. PL/pgSQL loops: the same in SQL with LATERAL subqueries
-- cost ten times as much per call, and the second one is called once per span of days.
CREATE FUNCTION svc_search_query(words text[]) RETURNS tsquery
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL UNSAFE AS $$
DECLARE
  word text;
  parts text[];
  phrase text;
  query text := '';
BEGIN
  FOREACH word IN ARRAY words LOOP
    parts := svc_words(word);
    IF cardinality(parts) = 0 THEN RETURN NULL; END IF;
    phrase := '';
    FOR i IN 1 .. cardinality(parts) LOOP
      phrase := phrase || CASE WHEN i > 1 THEN ' <-> ' ELSE '' END || quote_literal(parts[i])
                || CASE WHEN i = cardinality(parts) THEN ':*' ELSE '' END;
    END LOOP;
    query := query || CASE WHEN query <> '' THEN ' & ' ELSE '' END || '(' || phrase || ')';
  END LOOP;
  RETURN nullif(query, '')::tsquery;
END $$;
--> statement-breakpoint
-- The query over svc_search_days for the given days: every part of every word (the last part of a
-- word a prefix) on one of the days, the counterparty's INN when one is asked, and one of the
-- amount buckets when a range is asked. It finds a superset of the answer; the row decides. NULL
-- (nothing matches) without days or buckets, or when a word has no part left.
CREATE FUNCTION svc_search_days_query(words text[], counterparty_inn text, amount_buckets int[], days text[])
RETURNS tsquery
LANGUAGE plpgsql IMMUTABLE PARALLEL UNSAFE AS $$
DECLARE
  word text;
  parts text[];
  day text;
  bucket int;
  alternatives text;
  query text := '';
BEGIN
  IF cardinality(days) = 0 OR cardinality(amount_buckets) = 0 THEN RETURN NULL; END IF;
  FOREACH word IN ARRAY words LOOP
    parts := svc_words(word);
    IF cardinality(parts) = 0 THEN RETURN NULL; END IF;
    FOR i IN 1 .. cardinality(parts) LOOP
      alternatives := '';
      FOREACH day IN ARRAY days LOOP
        alternatives := alternatives || CASE WHEN alternatives <> '' THEN ' | ' ELSE '' END
                        || quote_literal(day || '/' || parts[i]) || CASE WHEN i = cardinality(parts) THEN ':*' ELSE '' END;
      END LOOP;
      query := query || CASE WHEN query <> '' THEN ' & ' ELSE '' END || '(' || alternatives || ')';
    END LOOP;
  END LOOP;
  IF counterparty_inn IS NOT NULL THEN
    alternatives := '';
    FOREACH day IN ARRAY days LOOP
      alternatives := alternatives || CASE WHEN alternatives <> '' THEN ' | ' ELSE '' END
                      || quote_literal(day || '#' || counterparty_inn);
    END LOOP;
    query := query || ' & (' || alternatives || ')';
  END IF;
  IF amount_buckets IS NOT NULL THEN
    alternatives := '';
    FOREACH day IN ARRAY days LOOP
      FOREACH bucket IN ARRAY amount_buckets LOOP
        alternatives := alternatives || CASE WHEN alternatives <> '' THEN ' | ' ELSE '' END
                        || quote_literal(day || '$' || bucket);
      END LOOP;
    END LOOP;
    query := query || ' & (' || alternatives || ')';
  END IF;
  RETURN nullif(query, '')::tsquery;
END $$;
--> statement-breakpoint
ALTER TABLE "operations" ADD COLUMN "search" tsvector
  GENERATED ALWAYS AS (svc_search_vector("purpose", "payer_name", "payee_name", "doc_number")) STORED;
--> statement-breakpoint
CREATE INDEX "operations_search_days_idx" ON "operations"
  USING gin (svc_search_days("doc_date", "counterparty_inn", "amount", "search"));
