#!/usr/bin/env bash
# The store's tests (tests/it/store.rs) against a real PostgreSQL server as well as SQLite: the
# distribution's package, a throwaway cluster in a temporary folder, run by a non-root user and
# listening on loopback only, stopped and removed at the end. Skipped, saying so, only when the
# server cannot be installed.
set -euo pipefail
cd "$(dirname "$0")/../.."

bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
if [ -z "$(bindir)" ] && command -v apt-get >/dev/null 2>&1; then
  apt-get install -y postgresql >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get install -y postgresql >/dev/null 2>&1; } || true
fi
BIN="$(bindir)"
if [ -z "$BIN" ] || [ ! -x "$BIN/initdb" ]; then
  echo "tests/store/pg.sh: SKIPPED: the PostgreSQL server could not be installed (apt-get install postgresql); the store was tested on SQLite only" >&2
  exit 0
fi

# A non-root user runs the server (initdb refuses root): the package's `postgres` user.
if [ "$(id -u)" = 0 ]; then
  RUN=(runuser -u postgres --)
else
  RUN=()
fi
TMP="$(mktemp -d /tmp/bench-normalize-pg.XXXXXX)"
chmod 755 "$TMP"
[ "$(id -u)" = 0 ] && chown postgres "$TMP"
PORT=""
for p in $(seq 55432 55532); do
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then PORT=$p; break; fi
done
[ -n "$PORT" ] || { echo "tests/store/pg.sh: no free port in 55432-55532" >&2; exit 1; }

stop() {
  "${RUN[@]}" "$BIN/pg_ctl" -D "$TMP/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap stop EXIT

"${RUN[@]}" "$BIN/initdb" -D "$TMP/data" --auth=trust --username=bench --encoding=UTF8 --locale=C >"$TMP/initdb.log" 2>&1 \
  || { cat "$TMP/initdb.log" >&2; exit 1; }
"${RUN[@]}" "$BIN/pg_ctl" -D "$TMP/data" -l "$TMP/server.log" -w -t 60 \
  -o "-c listen_addresses=127.0.0.1 -p $PORT -k $TMP -c fsync=off" start >/dev/null \
  || { cat "$TMP/server.log" >&2; exit 1; }
echo "tests/store/pg.sh: PostgreSQL $("$BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PORT"

# The tests make a database each (createdb) and store into it by URL.
export PATH="$BIN:$PATH" PGHOST=127.0.0.1 PGPORT="$PORT" PGUSER=bench
export BENCH_NORMALIZE_TEST_PG="postgresql://bench@127.0.0.1:$PORT"
cargo test --test it store::
