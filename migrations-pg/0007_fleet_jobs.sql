CREATE TABLE "svc_jobs" (
	"name" text COLLATE "C" PRIMARY KEY NOT NULL,
	"next_run_ms" bigint NOT NULL
);
