#!/usr/bin/env bash
# The whole suite, one test file per Bun process, on each store; SVC_TEST_JOBS files at a time
# (default: the machine's cores). In one process the files' in-memory databases, servers and heaps
# added up to 2.6 GB; alone, the largest file takes about 1.2 GB. The longest files start first (the
# slow tier, *.slow.test.ts, then the end-to-end files), so the last ones to finish are short;
# `--fast` leaves the slow tier out. Each file's output is shown whole once it has finished, with
# its lane and wall time; the last line adds them up. Exits non-zero when any file fails (or cannot
# run at all).
set -uo pipefail
cd "$(dirname "$0")/.."
BUN=node_modules/.bin/bun
JOBS=${SVC_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
# Each test file declares on its first line the lanes it runs in (docs/testing.md):
#   // lanes: sqlite            the default store only (SQLite's own features: files, WAL, backups)
#   // lanes: sqlite postgres   both: it builds the service with makeTestApp or starts a server with
#                               serverStoreEnv, so each app or server gets a PostgreSQL database of
#                               its own in the second lane (test/helpers/pg.ts)
#   // lanes: postgres          once, with SVC_TEST_STORE=postgres: it talks to PostgreSQL itself
# A file without a declaration (or with an unknown lane) fails the run before anything starts.
undeclared=()
declare -A lanes_of=()
for f in $(find test -name '*.test.ts' | sort); do
  first=$(head -n 1 "$f")
  if [[ "$first" =~ ^//\ lanes:((\ (sqlite|postgres))+)\ *$ ]]; then
    lanes_of[$f]=${BASH_REMATCH[1]}
  else
    undeclared+=("$f")
  fi
done
if [ "${#undeclared[@]}" -gt 0 ]; then
  echo "these test files do not declare their lanes on their first line (// lanes: sqlite, // lanes: sqlite postgres or // lanes: postgres; see docs/testing.md):" >&2
  printf '  %s\n' "${undeclared[@]}" >&2
  exit 1
fi
# in_lane LANE FILE: whether FILE declared LANE.
in_lane() { [[ " ${lanes_of[$2]} " == *" $1 "* ]]; }

files=$(printf '%s\n' "${!lanes_of[@]}" | sort)
queue=()
if [ "${1:-}" != "--fast" ]; then
  for lane in sqlite postgres; do
    for f in $files; do case "$f" in *.slow.test.ts) in_lane $lane "$f" && queue+=("$lane $f") ;; esac; done
  done
fi
for lane in sqlite postgres; do
  for f in $files; do case "$f" in test/e2e/*.slow.test.ts) ;; test/e2e/*) in_lane $lane "$f" && queue+=("$lane $f") ;; esac; done
done
for lane in sqlite postgres; do
  for f in $files; do case "$f" in *.slow.test.ts | test/e2e/*) ;; *) in_lane $lane "$f" && queue+=("$lane $f") ;; esac; done
done

WORK=$(mktemp -d)
# A throwaway PostgreSQL for the tests of the PostgreSQL store, stopped and removed at the end
# however the run ends.
PG_DIR=$(mktemp -d)
trap 'bash scripts/pg-test.sh stop "$PG_DIR"; rm -rf "$WORK"' EXIT
bash scripts/pg-test.sh start "$PG_DIR" || exit 1
SVC_TEST_DATABASE_URL=$(cat "$PG_DIR/url")
export SVC_TEST_DATABASE_URL
# The migrated database every app of the PostgreSQL lane is cloned from.
"$BUN" run scripts/pg-test-template.ts || exit 1

# run_file N LANE FILE: one file in a Bun process of its own, its output kept in $WORK/N.out and its
# exit status and seconds in $WORK/N.done; LANE is the store makeTestApp builds on.
run_file() {
  local started=$SECONDS
  SVC_TEST_STORE=$2 "$BUN" test "$3" >"$WORK/$1.out" 2>&1
  echo "$? $((SECONDS - started))" >"$WORK/$1.done"
}

passed=0
failed=0
broken=()
shown=0
# Shows finished files in queue order (so the log reads the same from run to run) and adds up their
# counts.
show_finished() {
  local out code secs p f
  while [ "$shown" -lt "${#queue[@]}" ] && [ -f "$WORK/$shown.done" ]; do
    read -r code secs <"$WORK/$shown.done"
    out="$WORK/$shown.out"
    echo "== ${queue[$shown]} (${secs} s)"
    cat "$out"
    p=$(grep -Eo '^ *[0-9]+ pass$' "$out" | grep -Eo '[0-9]+' | tail -n 1)
    f=$(grep -Eo '^ *[0-9]+ fail$' "$out" | grep -Eo '[0-9]+' | tail -n 1)
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0}))
    if [ "$code" -ne 0 ]; then broken+=("${queue[$shown]/ /:}"); fi
    rm -f "$out"
    shown=$((shown + 1))
  done
}

running=0
for i in "${!queue[@]}"; do
  if [ "$running" -ge "$JOBS" ]; then
    wait -n
    running=$((running - 1))
    show_finished
  fi
  # shellcheck disable=SC2086
  run_file "$i" ${queue[$i]} &
  running=$((running + 1))
done
wait
show_finished

echo
if [ "${#broken[@]}" -gt 0 ]; then
  echo "files that failed: ${broken[*]}"
  [ "$failed" -gt 0 ] || failed=${#broken[@]}
fi
echo "${passed} passed, ${failed} failed"
[ "${#broken[@]}" -eq 0 ]
