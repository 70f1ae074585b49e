#!/usr/bin/env bash
# Start/stop the project's Iceberg REST catalog test server (java/rest-catalog/, compiled here with
# javac against the Iceberg runtime jar and Spark's jars) on 127.0.0.1:$QREPL_REST_PORT (8181).
# It serves the REST spec's namespace and table endpoints through Iceberg's CatalogHandlers over
# a JdbcCatalog: by default SQLite ($STATE/rest/catalog.db, Debian's libxerial-sqlite-jdbc-java,
# `make rest-driver`); QREPL_REST_JDBC_URI=jdbc:postgresql://host:port/db (no password in it)
# with QREPL_REST_JDBC_USER and the owner-only QREPL_REST_JDBC_PASSWORD_FILE for PostgreSQL.
# Warehouse: $QREPL_REST_WAREHOUSE (default $STATE/rest/warehouse), file: paths.
# Authentication: every request needs `Authorization: Bearer <token>`, the token being the
# owner-only file $QREPL_REST_TOKEN_FILE (generated on first start, default
# $STATE/secrets/rest-token); the server refuses to start if others can read it. OAuth2 too:
# POST /v1/oauth/tokens issues a token valid $QREPL_REST_TOKEN_TTL seconds (3600) to the client
# $QREPL_REST_CLIENT_ID (qrepl) with the secret in the owner-only $QREPL_REST_CLIENT_SECRET_FILE
# (generated on first start, default $STATE/secrets/rest-client-secret): a client's
# `credential=qrepl:<that secret>`.
#   scripts/rest_catalog.sh start|stop|status
set -euo pipefail
umask 077  # the catalog database, metadata files and log: owner-only
cd "$(dirname "$0")/.."
PY=.venv/bin/python
STATE="${QREPL_STATE_DIR:-$PWD/.qrepl_state}"
PORT="${QREPL_REST_PORT:-8181}"
DIR="$STATE/rest"
PIDFILE="$DIR/rest.pid"
LOG="$DIR/rest.log"
TOKEN_FILE="${QREPL_REST_TOKEN_FILE:-$STATE/secrets/rest-token}"
CLIENT_ID="${QREPL_REST_CLIENT_ID:-qrepl}"
CLIENT_SECRET_FILE="${QREPL_REST_CLIENT_SECRET_FILE:-$STATE/secrets/rest-client-secret}"
WAREHOUSE="${QREPL_REST_WAREHOUSE:-$DIR/warehouse}"
JDBC_URI="${QREPL_REST_JDBC_URI:-jdbc:sqlite:$DIR/catalog.db}"
SQLITE_JAR="${QREPL_REST_SQLITE_JAR:-/usr/share/java/sqlite-jdbc.jar}"
MAIN=qrepl.rest.RestCatalogServer
SRC=java/rest-catalog/qrepl/rest/RestCatalogServer.java

# is PID this state's server? By its command line: after a crash or a reboot the pid file may
# name a pid the system gave to any other process, which must be neither stopped nor taken
# for a running server
ours() {
    local cmd
    cmd=$(tr '\0' ' ' < "/proc/$1/cmdline" 2>/dev/null) || return 1
    [[ "$cmd" == *" $MAIN --port $PORT "* ]]
}

running() { [ -f "$PIDFILE" ] && ours "$(cat "$PIDFILE")"; }

classpath() {  # the Iceberg runtime jar, Spark's jars (Hadoop, logging), the JDBC drivers
    local spark_home iceberg
    { read -r spark_home; read -r iceberg; read -r _; } < <($PY -m qrepl.storage.spark launch-settings)
    local cp="${iceberg%%:*}:$spark_home/jars/*"
    [ -f "$SQLITE_JAR" ] && cp="$cp:$SQLITE_JAR"
    [ -f /usr/share/java/postgresql.jar ] && cp="$cp:/usr/share/java/postgresql.jar"
    echo "$cp"
}

build() {  # build CLASSPATH -> prints the class directory
    local out="$DIR/classes"
    command -v javac >/dev/null || { echo "rest_catalog.sh: javac not found (apt-get install openjdk-17-jdk-headless)" >&2; exit 1; }
    if [ ! -f "$out/qrepl/rest/RestCatalogServer.class" ] || [ "$SRC" -nt "$out/qrepl/rest/RestCatalogServer.class" ]; then
        mkdir -p "$out"
        javac -nowarn -cp "$1" -d "$out" "$SRC" >&2
    fi
    echo "$out"
}

start() {
    if running; then echo "REST catalog already running on 127.0.0.1:$PORT"; return; fi
    if [[ "$JDBC_URI" == jdbc:sqlite:* && ! -f "$SQLITE_JAR" ]]; then
        echo "rest_catalog.sh: SQLite JDBC driver missing: $SQLITE_JAR (run \`make rest-driver\`)"; exit 1
    fi
    if [[ "${JDBC_URI,,}" == *password* ]]; then  # it would be on the server's command line
        echo "rest_catalog.sh: QREPL_REST_JDBC_URI must not carry a password: put it in QREPL_REST_JDBC_PASSWORD_FILE"; exit 1
    fi
    if (exec 3<>/dev/tcp/127.0.0.1/"$PORT") 2>/dev/null; then
        echo "rest_catalog.sh: 127.0.0.1:$PORT is in use by another process (set QREPL_REST_PORT)"; exit 1
    fi
    mkdir -p -m 700 "$STATE" "$DIR" "$WAREHOUSE"
    $PY -m qrepl.storage.spark ensure-secret "$TOKEN_FILE"
    $PY -m qrepl.storage.spark ensure-secret "$CLIENT_SECRET_FILE"
    local cp classes
    cp=$(classpath)
    classes=$(build "$cp")
    local extra=()
    [ -n "${QREPL_REST_JDBC_USER:-}" ] && extra+=(--jdbc-user "$QREPL_REST_JDBC_USER")
    [ -n "${QREPL_REST_JDBC_PASSWORD_FILE:-}" ] && extra+=(--jdbc-password-file "$QREPL_REST_JDBC_PASSWORD_FILE")
    echo "starting the Iceberg REST catalog on http://127.0.0.1:$PORT (catalog ${JDBC_URI%%\?*}, warehouse $WAREHOUSE; token in $TOKEN_FILE, OAuth2 client $CLIENT_ID's secret in $CLIENT_SECRET_FILE)"
    TZ=UTC nohup java -Xmx512m -Djava.net.preferIPv4Stack=true -Dlog4j2.configurationFile="$STATE/conf/log4j2.properties" \
        -cp "$classes:$cp" $MAIN --port "$PORT" --token-file "$TOKEN_FILE" --warehouse "$WAREHOUSE" \
        --jdbc-uri "$JDBC_URI" --client-id "$CLIENT_ID" --client-secret-file "$CLIENT_SECRET_FILE" \
        --token-ttl "${QREPL_REST_TOKEN_TTL:-3600}" "${extra[@]}" > "$LOG" 2>&1 &
    echo $! > "$PIDFILE"
    for i in $(seq 1 120); do
        # up: its own "listening" line logged (the port alone could be another process's)
        if grep -q '^qrepl REST catalog on ' "$LOG" && running; then echo "REST catalog up after ${i}s"; return; fi
        kill -0 "$(cat "$PIDFILE")" 2>/dev/null || {
            echo "REST catalog died: $(grep -m1 'qrepl REST catalog:' "$LOG" || tail -1 "$LOG"); see $LOG"
            tail -20 "$LOG"; rm -f "$PIDFILE"; exit 1
        }
        sleep 1
    done
    echo "REST catalog did not open port $PORT in 120s; see $LOG"; exit 1
}

stop() {
    [ -f "$PIDFILE" ] || { echo "REST catalog not running"; return; }
    local pid; pid=$(cat "$PIDFILE")
    if ! ours "$pid"; then
        rm -f "$PIDFILE"
        echo "REST catalog not running (stale pid file: pid $pid is not the server)"
        return
    fi
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 30); do ours "$pid" || break; sleep 1; done
    if ours "$pid"; then kill -9 "$pid" 2>/dev/null || true; fi
    rm -f "$PIDFILE"
    echo "REST catalog stopped"
}

status() {
    if running; then echo "REST catalog running on http://127.0.0.1:$PORT (pid $(cat "$PIDFILE"); token in $TOKEN_FILE)"
    else echo "REST catalog not running"; return 3; fi
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) status ;;
    *) echo "usage: scripts/rest_catalog.sh start|stop|status"; exit 2 ;;
esac
