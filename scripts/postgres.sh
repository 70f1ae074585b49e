#!/usr/bin/env bash
# A local PostgreSQL 15 cluster holding the shared Hive metastore (docs/deploying.md).
# It listens on 127.0.0.1 only, on a non-default port, and runs as an unprivileged user
# (PostgreSQL refuses root): the system user `qrepl-pg` (created on first use) when called as
# root, else the calling user. Its data directory: called as root, in a directory of its own
# user, $QREPL_PG_ROOT (/var/lib/qrepl-pg) / <deploy dir name>-<hash of its path>, so the
# checkout and the deployment's state dir can stay private to their owner (a 0700 home, a
# mktemp -d); otherwise $QREPL_DEPLOY_DIR/postgres.
#   scripts/postgres.sh start    # initdb on first use, start, create the metastore database
#   scripts/postgres.sh stop
#   scripts/postgres.sh url      # the QREPL_METASTORE value for this cluster
#   scripts/postgres.sh dir      # its directory (data, log, password, sockets)
#   scripts/postgres.sh destroy  # stop it and delete its directory
set -euo pipefail
umask 077
cd "$(dirname "$0")/.."
DEPLOY="${QREPL_DEPLOY_DIR:-$PWD/.qrepl_state/deploy}"
PORT="${QREPL_PG_PORT:-5433}"
PGBIN="${QREPL_PG_BIN:-/usr/lib/postgresql/15/bin}"
PG_ROOT="${QREPL_PG_ROOT:-/var/lib/qrepl-pg}"
if [ "$(id -u)" = 0 ]; then
    deploy_abs=$(realpath -m "$DEPLOY")
    PGDIR="$PG_ROOT/$(basename "$deploy_abs")-$(printf %s "$deploy_abs" | sha256sum | cut -c1-12)"
else
    PGDIR="$DEPLOY/postgres"
fi
DATA="$PGDIR/data"
SOCKETS="$PGDIR/run"
DATABASE=qrepl_metastore
# the port a cluster was created with wins over QREPL_PG_PORT (it is written into its config)
if [ -f "$DATA/postgresql.conf" ]; then
    PORT=$(sed -n 's/^port = \([0-9]*\)$/\1/p' "$DATA/postgresql.conf" | tail -1)
fi
DB_USER=qrepl
OS_USER=qrepl-pg

as_pg() {  # run a PostgreSQL binary as the unprivileged owner of the cluster
    # from /: the checkout may be closed to that user (its paths here are all absolute)
    if [ "$(id -u)" = 0 ]; then (cd / && runuser -u "$OS_USER" -- "$@"); else "$@"; fi
}

ensure_os_user() {
    [ "$(id -u)" = 0 ] || return 0
    id -u "$OS_USER" >/dev/null 2>&1 && return 0
    useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$OS_USER"
}

running() { [ -f "$DATA/postmaster.pid" ] && as_pg "$PGBIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; }

url() {
    echo "postgresql://$DB_USER:$(as_pg cat "$PGDIR/password")@127.0.0.1:$PORT/$DATABASE"
}

init() {
    [ -x "$PGBIN/initdb" ] || { echo "postgres.sh: $PGBIN/initdb not found (apt-get install postgresql-15, or set QREPL_PG_BIN)"; exit 1; }
    ensure_os_user
    if [ "$(id -u)" = 0 ]; then  # a directory of the PostgreSQL user's own, outside the checkout
        mkdir -p "$PG_ROOT"
        chown "$OS_USER" "$PG_ROOT"
        chmod 700 "$PG_ROOT"
        as_pg mkdir -p -m 700 "$PGDIR"
    else
        mkdir -p -m 700 "$PGDIR"
    fi
    if ! as_pg test -w "$PGDIR"; then
        echo "postgres.sh: user $OS_USER cannot reach $PGDIR (a parent directory is closed to other users);"
        echo "  set QREPL_PG_ROOT to a directory it can traverse"
        exit 1
    fi
    # a generated password for TCP connections; the Unix socket sits in a directory only the owner can enter
    as_pg sh -c "umask 077; set -C; head -c 18 /dev/urandom | base64 | tr -d '+/=' > '$PGDIR/password'"
    as_pg "$PGBIN/initdb" -D "$DATA" -U "$DB_USER" --pwfile="$PGDIR/password" \
        --auth-host=scram-sha-256 --auth-local=trust -E UTF8 --locale=C.UTF-8 >"$PGDIR/initdb.log" 2>&1 \
        || { cat "$PGDIR/initdb.log"; exit 1; }
    as_pg mkdir -p "$SOCKETS"
    as_pg sh -c "cat >> '$DATA/postgresql.conf'" <<CONF
# qrepl: the shared Hive metastore of one machine
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$SOCKETS'
max_connections = 200
CONF
}

start() {
    if running; then echo "postgres already running on 127.0.0.1:$PORT"; return; fi
    [ -f "$DATA/PG_VERSION" ] || init
    echo "starting PostgreSQL on 127.0.0.1:$PORT (data $DATA)"
    as_pg "$PGBIN/pg_ctl" -D "$DATA" -l "$PGDIR/postgres.log" -w -t 60 start >/dev/null \
        || { tail -20 "$PGDIR/postgres.log"; exit 1; }
    if ! as_pg psql -h "$SOCKETS" -p "$PORT" -U "$DB_USER" -d postgres -tAc \
            "select 1 from pg_database where datname = '$DATABASE'" | grep -q 1; then
        as_pg "$PGBIN/createdb" -h "$SOCKETS" -p "$PORT" -U "$DB_USER" "$DATABASE"
    fi
    echo "postgres up: QREPL_METASTORE=postgresql://$DB_USER:***@127.0.0.1:$PORT/$DATABASE"
}

stop() {
    if ! running; then echo "postgres not running"; return; fi
    as_pg "$PGBIN/pg_ctl" -D "$DATA" -m fast -w -t 60 stop >/dev/null
    echo "postgres stopped"
}

destroy() {
    stop
    [ -d "$PGDIR" ] && rm -rf "$PGDIR" && echo "postgres: deleted $PGDIR"
    return 0
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    url) url ;;
    dir) echo "$PGDIR" ;;
    destroy) destroy ;;
    *) echo "usage: scripts/postgres.sh start|stop|url|dir|destroy"; exit 2 ;;
esac
