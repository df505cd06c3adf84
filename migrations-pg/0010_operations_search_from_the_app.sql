-- The search column is filled when operations are stored (src/db/pg/search-vector.ts computes
-- svc_search_vector in the application: in PostgreSQL it cost about 100 µs a row, a third of
-- storing one). The values already stored stay. A row stored without it (svc admin
-- migrate-to-postgres, a hand-written INSERT) and a change of a searched column get it from the
-- database, as before.
ALTER TABLE operations ALTER COLUMN search DROP EXPRESSION;
--> statement-breakpoint
CREATE FUNCTION svc_operations_search() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.search := svc_search_vector(NEW.purpose, NEW.payer_name, NEW.payee_name, NEW.doc_number);
  RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE TRIGGER operations_search_bi BEFORE INSERT ON operations
  FOR EACH ROW WHEN (NEW.search IS NULL) EXECUTE FUNCTION svc_operations_search();
--> statement-breakpoint
CREATE TRIGGER operations_search_bu BEFORE UPDATE OF purpose, payer_name, payee_name, doc_number ON operations
  FOR EACH ROW EXECUTE FUNCTION svc_operations_search();
