-- audit_token_blocks kept once per statement instead of once per row: a batch of audit entries is
-- one INSERT, and its new (token, block) keys go in sorted order. Two replicas' batches that
-- start the same new blocks then take their keys' locks in the same order: no deadlock (with the
-- row trigger, each took them in its entries' order, and at a block boundary one batch of two
-- failed after a second's wait).
DROP TRIGGER audit_token_blocks_ai ON audit_log;
--> statement-breakpoint
DROP FUNCTION svc_audit_token_block();
--> statement-breakpoint
CREATE FUNCTION svc_audit_token_blocks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO audit_token_blocks (api_token_id, block)
    SELECT DISTINCT api_token_id, id >> 12 FROM new_rows WHERE api_token_id IS NOT NULL ORDER BY 1, 2
    ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER audit_token_blocks_ai AFTER INSERT ON audit_log REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION svc_audit_token_blocks();
