#!/usr/bin/env bash
# Run a command against a throwaway PostgreSQL cluster, 15 or later (make test-pg: the suite).
#
#   .ci/postgres.sh [COMMAND ...]      default: make test
#
# Installs the PostgreSQL server the release offers (Debian's `postgresql` metapackage: 15 on
# Debian 12, 17 on Debian 13) with apt when none is there (as root), uses the newest version
# found under /usr/lib/postgresql (or PGBIN), refuses one older than 15, initialises a cluster in
# a temp dir as the `postgres` user, listens on a unix socket only (no TCP), creates the role and database
# `grove` (the role may create databases: the test run makes test_grove), runs COMMAND with
# GROVE_DATABASE_URL pointing there, and stops and removes the cluster on any exit.
set -euo pipefail
cd "$(dirname "$0")/.."

# The newest server installed: /usr/lib/postgresql/<major>/bin.
newest() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4,4n | tail -n1; }
PGBIN=${PGBIN:-$(newest)}
if [ ! -x "${PGBIN:-/nonexistent}/initdb" ]; then
	if [ "$(id -u)" = 0 ]; then
		echo "Installing the PostgreSQL server from the release's packages (postgresql)..."
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
		PGBIN=$(newest)
	else
		echo "PostgreSQL is missing: run 'sudo apt-get install postgresql' (15 or later; or set PGBIN)."; exit 1
	fi
fi
MAJOR=$("$PGBIN/initdb" --version | grep -oE '[0-9]+' | head -n1)
if [ "$MAJOR" -lt 15 ]; then
	echo "PostgreSQL $MAJOR at $PGBIN: Grove needs 15 or later (set PGBIN to a newer one's bin)."; exit 1
fi

# initdb refuses to run as root: the cluster belongs to `postgres` when we are root.
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

DIR=$(mktemp -d /tmp/grove-pg.XXXXXX)
chmod 755 "$DIR"
mkdir -p "$DIR/data" "$DIR/sock"
[ "$(id -u)" = 0 ] && chown -R postgres: "$DIR/data" "$DIR/sock"

stop() {
	as_pg "$PGBIN/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1 || true
	rm -rf "$DIR"
}
trap stop EXIT INT TERM

as_pg "$PGBIN/initdb" -D "$DIR/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >/dev/null
as_pg "$PGBIN/pg_ctl" -D "$DIR/data" -l "$DIR/data/server.log" -w \
	-o "-k $DIR/sock -c listen_addresses='' -c fsync=off -c max_connections=200" start >/dev/null
as_pg "$PGBIN/psql" -h "$DIR/sock" -U postgres -q -v ON_ERROR_STOP=1 \
	-c "CREATE ROLE grove LOGIN CREATEDB" -c "CREATE DATABASE grove OWNER grove"

export GROVE_DATABASE_URL="postgres://grove@/grove?host=$DIR/sock"
echo "PostgreSQL $MAJOR on $DIR/sock (GROVE_DATABASE_URL=$GROVE_DATABASE_URL)"
if [ $# -eq 0 ]; then set -- make test; fi
"$@"
