#!/usr/bin/env bash
# The whole suite, one test file per Bun process, one after another, on each store. In one process the files'
# in-memory databases, servers and heaps added up to 2.6 GB; alone, the largest file takes about
# 1.2 GB. The slow tier (*.slow.test.ts) runs last; `--fast` leaves it out. Each file's own output
# is shown; the last line adds them up. Exits non-zero when any file fails (or cannot run at all).
set -uo pipefail
cd "$(dirname "$0")/.."
BUN=node_modules/.bin/bun
# A throwaway PostgreSQL for the tests of the PostgreSQL store, stopped and removed at the end
# however the run ends.
PG_DIR=$(mktemp -d)
trap 'bash scripts/pg-test.sh stop "$PG_DIR"' EXIT
bash scripts/pg-test.sh start "$PG_DIR" || exit 1
SVC_TEST_DATABASE_URL=$(cat "$PG_DIR/url")
export SVC_TEST_DATABASE_URL
# The migrated database every app of the PostgreSQL lane is cloned from.
"$BUN" run scripts/pg-test-template.ts || exit 1
passed=0
failed=0
broken=()
# run_file LANE FILE: one file in a Bun process of its own; LANE is the store makeTestApp builds on.
run_file() {
  local out code p f
  out=$(mktemp)
  SVC_TEST_STORE=$1 "$BUN" test "$2" 2>&1 | tee "$out"
  code=${PIPESTATUS[0]}
  p=$(grep -Eo '^ *[0-9]+ pass$' "$out" | grep -Eo '[0-9]+' | tail -n 1)
  f=$(grep -Eo '^ *[0-9]+ fail$' "$out" | grep -Eo '[0-9]+' | tail -n 1)
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  if [ "$code" -ne 0 ]; then broken+=("$1:$2"); fi
  rm -f "$out"
}
# Lane one: every file on SQLite, the default store (and the PostgreSQL store's own tests).
while IFS= read -r file; do run_file sqlite "$file"; done < <(
  find test -name '*.test.ts' -not -name '*.slow.test.ts' | sort
  if [ "${1:-}" != "--fast" ]; then find test -name '*.slow.test.ts' | sort; fi
)
# Lane two: the files that build the service with makeTestApp, or start a server with
# serverStoreEnv (directly or through a helper that does), again, each app or server on a
# PostgreSQL database of its own (test/helpers/test-store.ts). The slow tier stays on SQLite.
app_helpers=$(grep -rlE 'makeTestApp|serverStoreEnv' test --include='*.ts' | grep -v '\.test\.ts$' | grep -v -e 'helpers/app.ts' -e 'helpers/test-store.ts')
pattern='makeTestApp|serverStoreEnv'
for helper in $app_helpers; do pattern="$pattern|$(basename "${helper%.ts}")\""; done
while IFS= read -r file; do run_file postgres "$file"; done < <(
  grep -rlE "$pattern" test --include='*.test.ts' | grep -v '\.slow\.test\.ts$' | sort
)
echo
if [ "${#broken[@]}" -gt 0 ]; then
  echo "files that failed: ${broken[*]}"
  [ "$failed" -gt 0 ] || failed=${#broken[@]}
fi
echo "${passed} passed, ${failed} failed"
[ "${#broken[@]}" -eq 0 ]
