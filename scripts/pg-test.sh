#!/usr/bin/env bash
# Throwaway PostgreSQL servers for the PostgreSQL backend's tests.
#
#   eval "$(scripts/pg-test.sh start)"   # prints export lines for the DSNs
#   scripts/pg-test.sh stop
#   scripts/pg-test.sh run -- go test ./...   # start, run the command, stop
#
# run is what `make test` uses: when HIVEMEM_TEST_POSTGRES_DSN is already
# set (.ci/run starts the servers itself) it only runs the command; when the
# servers cannot start here (no postgresql package and no root to install
# it) it says so and runs the command anyway, and the PostgreSQL tests skip
# (outside CI, where they fail instead).
#
# start runs two servers on loopback ports, each in a fresh temp dir:
#   - a PostgreSQL cluster from Debian's `postgresql` package (initdb +
#     pg_ctl as the postgres user; installed with apt-get when missing),
#     without pgvector: HIVEMEM_TEST_POSTGRES_DSN. It also has a role
#     `hivemem_pw` with a password, for the wrong-password test
#     (HIVEMEM_TEST_POSTGRES_PW_DSN).
#   - PGlite (PostgreSQL in WASM, from npm) with the pgvector extension
#     behind @electric-sql/pglite-socket (one connection at a time):
#     HIVEMEM_TEST_PGLITE_DSN. Skipped, with a warning, when node is missing
#     or tests/pglite has no node_modules (run `npm ci` there).
# State (dirs, pids, ports) is kept in $PG_TEST_STATE (default
# /tmp/hivemem-pg-test) so that stop finds it.
set -euo pipefail
cd "$(dirname "$0")/.."
STATE="${PG_TEST_STATE:-/tmp/hivemem-pg-test}"
PG_PORT="${PG_TEST_PORT:-55432}"
PGLITE_PORT="${PGLITE_TEST_PORT:-55433}"

log() { echo "pg-test: $*" >&2; }

find_bindir() {
	local d
	for d in /usr/lib/postgresql/*/bin; do
		if [ -x "$d/initdb" ]; then
			echo "$d"
			return 0
		fi
	done
	return 1
}

as_postgres() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

start_postgres() {
	local bindir
	if ! bindir="$(find_bindir)"; then
		log "initdb not found: installing Debian's postgresql package"
		apt-get update -qq >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
		bindir="$(find_bindir)"
	fi
	local dir="$STATE/pg"
	rm -rf "$dir"
	mkdir -p "$dir"
	if [ "$(id -u)" = 0 ]; then
		chown postgres:postgres "$dir"
	fi
	as_postgres "$bindir/initdb" -D "$dir/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
		-E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; return 1; }
	# The superuser connects over loopback without a password (trust for
	# it alone); every other role needs its password.
	{
		echo "host all postgres 127.0.0.1/32 trust"
		echo "host all all 127.0.0.1/32 scram-sha-256"
	} | as_postgres tee "$dir/data/pg_hba.conf" >/dev/null
	as_postgres "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
		-o "-c listen_addresses=127.0.0.1 -p $PG_PORT -c unix_socket_directories=$dir -c max_connections=200 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c shared_buffers=256MB" \
		start >&2 || { cat "$dir/server.log" >&2; return 1; }
	as_postgres "$bindir/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -q \
		-c "CREATE ROLE hivemem_pw LOGIN PASSWORD 'right-password' CREATEDB" \
		-c "CREATE DATABASE hivemem_pw OWNER hivemem_pw" >&2
	echo "$bindir" >"$STATE/pg.bindir"
	echo "export HIVEMEM_TEST_POSTGRES_DSN='postgres://postgres@127.0.0.1:$PG_PORT/postgres?sslmode=disable'"
	echo "export HIVEMEM_TEST_POSTGRES_PW_DSN='postgres://hivemem_pw:right-password@127.0.0.1:$PG_PORT/hivemem_pw?sslmode=disable'"
}

start_pglite() {
	if ! command -v node >/dev/null || [ ! -d tests/pglite/node_modules/@electric-sql/pglite-socket ]; then
		log "PGlite not installed (cd tests/pglite && npm ci): no pgvector server"
		return 0
	fi
	local dir="$STATE/pglite"
	rm -rf "$dir"
	mkdir -p "$dir"
	PGLITE_PORT="$PGLITE_PORT" nohup node tests/pglite/server.mjs >"$dir/server.log" 2>&1 &
	echo $! >"$dir/pid"
	local i
	for i in $(seq 1 120); do
		if grep -q "^ready" "$dir/server.log" 2>/dev/null; then
			echo "export HIVEMEM_TEST_PGLITE_DSN='postgres://postgres@127.0.0.1:$PGLITE_PORT/postgres?sslmode=disable'"
			return 0
		fi
		if ! kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
			break
		fi
		sleep 0.5
	done
	cat "$dir/server.log" >&2
	log "PGlite did not start"
	return 1
}

stop_all() {
	if [ -f "$STATE/pglite/pid" ]; then
		kill "$(cat "$STATE/pglite/pid")" 2>/dev/null || true
		rm -f "$STATE/pglite/pid"
	fi
	if [ -f "$STATE/pg.bindir" ] && [ -d "$STATE/pg/data" ]; then
		as_postgres "$(cat "$STATE/pg.bindir")/pg_ctl" -D "$STATE/pg/data" -m immediate -w stop >&2 || true
	fi
	rm -rf "$STATE"
}

case "${1:-}" in
start)
	if [ -d "$STATE" ]; then
		stop_all
	fi
	mkdir -p "$STATE"
	chmod 755 "$STATE"
	start_postgres
	start_pglite
	;;
stop)
	stop_all
	;;
run)
	shift
	if [ "${1:-}" = "--" ]; then
		shift
	fi
	if [ -z "${HIVEMEM_TEST_POSTGRES_DSN:-}" ]; then
		if out="$("$0" start)"; then
			eval "$out"
			trap '"$0" stop' EXIT
		else
			log "could not start the test servers: the PostgreSQL tests will skip"
			"$0" stop || true
		fi
	fi
	"$@"
	;;
*)
	echo "usage: $0 start|stop|run -- command..." >&2
	exit 2
	;;
esac
