-- audit_token_blocks: which blocks of 4096 consecutive ids hold entries of a token (see the SQLite
-- migration 0005), kept by a trigger for every writer, as on SQLite. Declared in neither schema:
-- derived data (svc admin migrate-to-postgres leaves it to the trigger).
CREATE TABLE audit_token_blocks (
  api_token_id text COLLATE "C" NOT NULL,
  block bigint NOT NULL,
  PRIMARY KEY (api_token_id, block)
);
--> statement-breakpoint
CREATE FUNCTION svc_audit_token_block() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO audit_token_blocks (api_token_id, block) VALUES (NEW.api_token_id, NEW.id >> 12)
    ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER audit_token_blocks_ai AFTER INSERT ON audit_log FOR EACH ROW
  WHEN (NEW.api_token_id IS NOT NULL) EXECUTE FUNCTION svc_audit_token_block();
