CREATE TABLE `svc_jobs` (
	`name` text PRIMARY KEY NOT NULL,
	`next_run_ms` integer NOT NULL
);
