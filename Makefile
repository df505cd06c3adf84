# The project installs its own toolchain: Bun comes from the npm registry as a devDependency.
BUN := node_modules/.bin/bun
export PATH := $(CURDIR)/node_modules/.bin:$(PATH)

.PHONY: run test test-fast deadcode build check lint fmt typecheck migrations bench clean test-deps

node_modules/.installed: package.json package-lock.json
	# Exactly what package-lock.json pins (npm ci refuses a lock file that does not match package.json).
	npm ci --no-audit --no-fund
	@touch $@

# The demo polls its sandbox bank every 2 s (instead of 30): an ordered statement is ready in moments.
run: node_modules/.installed
	SVC_DB_PATH=$${SVC_DB_PATH:-./data/svc.db} SVC_BANK_POLL_INTERVAL_MS=$${SVC_BANK_POLL_INTERVAL_MS:-2000} $(BUN) run cli/svc.ts serve --demo

# One Bun process per test file, several at a time (see docs/testing.md): each stays under 1.5 GB.
# The slow tier (*.slow.test.ts) runs last; test-fast leaves it out (CI runs `make test`).
test: node_modules/.installed typecheck lint deadcode test-deps
	bash scripts/run-tests.sh

test-fast: node_modules/.installed typecheck lint deadcode test-deps
	bash scripts/run-tests.sh --fast

# Debian packages the tests use (installed when missing): Chromium for the admin pages' browser
# test, the official Prometheus Python client, whose text-format parser reads /metrics, and
# PostgreSQL, of which the suite starts a throwaway server (scripts/pg-test.sh), and libxml2's
# xmllint, which holds 1C:DirectBank messages to the standard's XML schemas.
test-deps:
	sh scripts/ensure-chromium.sh
	sh scripts/ensure-deb.sh python3-prometheus-client /usr/lib/python3/dist-packages/prometheus_client/parser.py
	sh scripts/ensure-deb.sh postgresql-15 /usr/lib/postgresql/15/bin/initdb
	sh scripts/ensure-deb.sh libxml2-utils /usr/bin/xmllint

typecheck: node_modules/.installed
	node_modules/.bin/tsc -p tsconfig.json

lint: node_modules/.installed
	node_modules/.bin/biome check .

# Exports and files nothing uses (knip.json lists the entry points: the binaries, workers, tests).
deadcode: node_modules/.installed
	node_modules/.bin/knip

fmt: node_modules/.installed
	node_modules/.bin/biome check --write .

# Both dialects: SQLite (the default store; embedded in the binary) and PostgreSQL (migrations-pg/,
# the store several replicas share; test/db/pg-schema.test.ts keeps the two schemas equal).
migrations: node_modules/.installed
	node_modules/.bin/drizzle-kit generate
	node_modules/.bin/drizzle-kit generate --config drizzle.pg.config.ts
	$(BUN) run scripts/gen-migrations-index.ts

build: node_modules/.installed
	# The checkpoint, export, import and search workers run in threads of their own: a standalone binary needs them as entrypoints.
	$(BUN) build --compile --minify-whitespace --minify-syntax cli/svc.ts src/db/sqlite/checkpoint-worker.ts src/statements/export/worker.ts src/statements/import/worker.ts src/db/search-worker.ts src/ops/backup-worker.ts src/db/pg/sync-worker.ts --outfile dist/svc
	$(BUN) build --compile --minify-whitespace --minify-syntax cli/svc-mcp.ts --outfile dist/svc-mcp

# Benchmarks (not part of `make test`): wrk-driven HTTP runs, exports, search, ordering, start-up.
# Prints one table and writes bench/results/latest.json. Takes a few minutes.
bench: node_modules/.installed build
	sh scripts/ensure-wrk.sh
	$(BUN) run bench/run.ts

clean:
	rm -rf dist node_modules
