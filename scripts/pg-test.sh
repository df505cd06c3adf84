#!/usr/bin/env bash
# pg-test.sh start DIR | stop DIR: a throwaway PostgreSQL for the test suite, in DIR (made by the
# caller, e.g. mktemp -d); down DIR / up DIR: an outage (connections cut, data kept) and the
# server back on the same port. start: initdb (C locale: nothing may depend on a server's locale) and
# pg_ctl on 127.0.0.1 at a free port, durability off (a test cluster is thrown away); writes the
# connection URL to DIR/url. stop: immediate shutdown and DIR removed. PostgreSQL refuses to run as
# root, so as root the server runs as the `postgres` user the Debian package creates.
set -euo pipefail
ACTION=$1
DIR=$2
BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -z "$BIN" ]; then echo "pg-test: PostgreSQL is not installed (make test-deps)" >&2; exit 1; fi
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
serve() {
  as_owner "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 30 \
    -o "-h 127.0.0.1 -p $PORT -k $DIR -c fsync=off -c full_page_writes=off -c synchronous_commit=off -c max_connections=200" \
    start >/dev/null
}
case "$ACTION" in
  start)
    mkdir -p "$DIR/data"
    if [ "$(id -u)" -eq 0 ]; then chown -R postgres "$DIR"; fi
    as_owner "$BIN/initdb" -D "$DIR/data" -U svc --auth=trust -E UTF8 --locale=C >"$DIR/initdb.log" 2>&1
    PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
    echo "$PORT" >"$DIR/port"
    serve
    echo "postgres://svc@127.0.0.1:$PORT/postgres" >"$DIR/url"
    ;;
  down)
    # fast, not immediate: commits made with synchronous_commit off must survive the outage.
    as_owner "$BIN/pg_ctl" -D "$DIR/data" -m fast stop >/dev/null
    ;;
  up)
    PORT=$(cat "$DIR/port")
    serve
    ;;
  stop)
    if [ -d "$DIR/data" ]; then as_owner "$BIN/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true; fi
    rm -rf "$DIR"
    ;;
  *)
    echo "usage: pg-test.sh start|stop|down|up DIR" >&2
    exit 2
    ;;
esac
