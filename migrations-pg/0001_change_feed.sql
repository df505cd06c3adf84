-- Every committed change of a table svc keeps rows of is announced on the channel svc_changes with
-- the table's name (src/db/pg/change-feed.ts): each replica empties that table's cache. Row
-- triggers, so a statement that changes nothing announces nothing; PostgreSQL folds the same
-- announcement made many times in a transaction into one, delivers it at commit to every
-- listening session, and drops it on rollback.
CREATE FUNCTION svc_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('svc_changes', TG_TABLE_NAME);
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- A token's last use is kept to the minute and cached nowhere: that alone announces nothing.
CREATE TRIGGER api_tokens_written AFTER INSERT OR DELETE ON api_tokens FOR EACH ROW EXECUTE FUNCTION svc_changed();
--> statement-breakpoint
CREATE TRIGGER api_tokens_updated AFTER UPDATE ON api_tokens FOR EACH ROW
  WHEN ((to_jsonb(OLD) - 'last_used_at') IS DISTINCT FROM (to_jsonb(NEW) - 'last_used_at'))
  EXECUTE FUNCTION svc_changed();
--> statement-breakpoint
CREATE TRIGGER api_tokens_truncated AFTER TRUNCATE ON api_tokens FOR EACH STATEMENT EXECUTE FUNCTION svc_changed();
--> statement-breakpoint
CREATE TRIGGER token_accounts_written AFTER INSERT OR UPDATE OR DELETE ON token_accounts FOR EACH ROW EXECUTE FUNCTION svc_changed();
--> statement-breakpoint
CREATE TRIGGER token_accounts_truncated AFTER TRUNCATE ON token_accounts FOR EACH STATEMENT EXECUTE FUNCTION svc_changed();
--> statement-breakpoint
CREATE TRIGGER bank_accounts_written AFTER INSERT OR UPDATE OR DELETE ON bank_accounts FOR EACH ROW EXECUTE FUNCTION svc_changed();
--> statement-breakpoint
CREATE TRIGGER bank_accounts_truncated AFTER TRUNCATE ON bank_accounts FOR EACH STATEMENT EXECUTE FUNCTION svc_changed();
--> statement-breakpoint
CREATE TRIGGER balances_written AFTER INSERT OR UPDATE OR DELETE ON balances FOR EACH ROW EXECUTE FUNCTION svc_changed();
--> statement-breakpoint
CREATE TRIGGER balances_truncated AFTER TRUNCATE ON balances FOR EACH STATEMENT EXECUTE FUNCTION svc_changed();
--> statement-breakpoint
CREATE TRIGGER mcp_sessions_written AFTER INSERT OR UPDATE OR DELETE ON mcp_sessions FOR EACH ROW EXECUTE FUNCTION svc_changed();
--> statement-breakpoint
CREATE TRIGGER mcp_sessions_truncated AFTER TRUNCATE ON mcp_sessions FOR EACH STATEMENT EXECUTE FUNCTION svc_changed();
--> statement-breakpoint
CREATE TRIGGER statements_written AFTER INSERT OR UPDATE OR DELETE ON statements FOR EACH ROW EXECUTE FUNCTION svc_changed();
--> statement-breakpoint
CREATE TRIGGER statements_truncated AFTER TRUNCATE ON statements FOR EACH STATEMENT EXECUTE FUNCTION svc_changed();
