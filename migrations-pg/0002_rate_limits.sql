-- Rate-limit counters shared by the replicas (src/db/pg/rate-limiter.ts): one row per key and
-- one-minute window, counted by INSERT ... ON CONFLICT DO UPDATE. UNLOGGED: no WAL for a write on
-- every request; a crash empties the table, which at worst restarts the current minute's counts.
-- PostgreSQL only: the single SQLite server counts in memory.
CREATE UNLOGGED TABLE "rate_limit_hits" (
	"key" text COLLATE "C" NOT NULL,
	"window_start_ms" bigint NOT NULL,
	"used" integer NOT NULL,
	CONSTRAINT "rate_limit_hits_pkey" PRIMARY KEY ("key", "window_start_ms")
);
