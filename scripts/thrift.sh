#!/usr/bin/env bash
# Start/stop a real Spark Thrift Server on 127.0.0.1 with qrepl's Spark + Iceberg config.
# State: $QREPL_STATE_DIR. With the embedded Derby metastore the server owns it while it runs;
# with QREPL_METASTORE (docs/deploying.md) it shares the PostgreSQL one with every other JVM.
# QREPL_THRIFT_MASTER: local[2] (default) or a cluster, e.g. spark://127.0.0.1:7077; on a
# cluster the executors run in their own JVMs and get the Iceberg jar through spark.jars.
# Authentication (docs/security.md): hive.server2.authentication=CUSTOM with
# qrepl.auth.FilePasswordAuthenticator (java/, compiled here with javac): user $QREPL_THRIFT_USER
# (qrepl), password the owner-only file $QREPL_THRIFT_PASSWORD_FILE (generated on first start,
# default $QREPL_STATE_DIR/secrets/thrift-password). Clients: dbt's `thrift` target and PyHive
# with auth CUSTOM and QREPL_THRIFT_PASSWORD, beeline with -n qrepl -w <that file>.
set -euo pipefail
umask 077  # the server's logs, and the warehouse files it writes, are owner-only
cd "$(dirname "$0")/.."
PY=.venv/bin/python
STATE="${QREPL_STATE_DIR:-$PWD/.qrepl_state}"
PORT="${QREPL_THRIFT_PORT:-10000}"
PIDFILE="$STATE/thrift.pid"
MASTER="${QREPL_THRIFT_MASTER:-local[2]}"
export QREPL_THRIFT_PASSWORD_FILE="${QREPL_THRIFT_PASSWORD_FILE:-$STATE/secrets/thrift-password}"
export QREPL_THRIFT_USER="${QREPL_THRIFT_USER:-qrepl}"
AUTH_SRC=java/qrepl/auth/FilePasswordAuthenticator.java

build_authenticator() {  # build_authenticator SPARK_HOME -> prints the class directory
    local out="$STATE/auth-classes" api
    api=$(ls "$1"/jars/spark-hive-thriftserver_*.jar 2>/dev/null | head -1)
    [ -n "$api" ] || { echo "thrift.sh: no spark-hive-thriftserver jar in $1/jars" >&2; exit 1; }
    command -v javac >/dev/null || { echo "thrift.sh: javac not found (apt-get install openjdk-17-jdk-headless)" >&2; exit 1; }
    if [ ! -f "$out/qrepl/auth/FilePasswordAuthenticator.class" ] || [ "$AUTH_SRC" -nt "$out/qrepl/auth/FilePasswordAuthenticator.class" ]; then
        mkdir -p "$out"
        javac -nowarn -cp "$api" -d "$out" "$AUTH_SRC" >&2
    fi
    echo "$out"
}

# is PID this state's server? By its command line: after a crash or a reboot the pid file may
# name a pid the system gave to any other process, which must be neither stopped nor taken
# for a running server
ours() {
    local cmd
    cmd=$(tr '\0' ' ' < "/proc/$1/cmdline" 2>/dev/null) || return 1
    [[ "$cmd" == *HiveThriftServer2* && "$cmd" == *"hive.server2.thrift.port=$PORT "* ]]
}

running() { [ -f "$PIDFILE" ] && ours "$(cat "$PIDFILE")"; }

start() {
    if running; then echo "thrift server already running"; return; fi
    mkdir -p -m 700 "$STATE"
    $PY -m qrepl.storage.spark ensure-secret "$QREPL_THRIFT_PASSWORD_FILE"
    { read -r SPARK_HOME; read -r CLASS_PATH; read -r CONF_DIR; } < <($PY -m qrepl.storage.spark launch-settings)
    CLASS_PATH="$CLASS_PATH:$(build_authenticator "$SPARK_HOME")"
    export SPARK_HOME SPARK_CONF_DIR="$CONF_DIR" SPARK_LOCAL_IP=127.0.0.1 TZ=UTC
    local cluster=()
    if [[ "$MASTER" == spark://* ]]; then  # one executor of the worker's cores, modest memory
        cluster=(--driver-memory "${QREPL_THRIFT_DRIVER_MEMORY:-2g}"
                 --conf spark.executor.cores="${QREPL_EXECUTOR_CORES:-2}"
                 --conf spark.cores.max="${QREPL_EXECUTOR_CORES:-2}"
                 --conf spark.executor.memory="${QREPL_EXECUTOR_MEMORY:-1500m}")
    fi
    echo "starting Spark Thrift Server on 127.0.0.1:$PORT, master $MASTER (state $STATE; user $QREPL_THRIFT_USER, password in $QREPL_THRIFT_PASSWORD_FILE)"
    # --driver-class-path: the Iceberg jar (Thrift sessions need it there, not only in spark.jars)
    # and, for a PostgreSQL metastore, its JDBC driver, and the authenticator's class
    nohup "$SPARK_HOME/bin/spark-submit" --class org.apache.spark.sql.hive.thriftserver.HiveThriftServer2 \
        --master "$MASTER" --driver-class-path "$CLASS_PATH" "${cluster[@]}" --name qrepl-thrift spark-internal \
        --hiveconf hive.server2.thrift.bind.host=127.0.0.1 --hiveconf hive.server2.thrift.port="$PORT" \
        --hiveconf hive.server2.authentication=CUSTOM \
        --hiveconf hive.server2.custom.authentication.class=qrepl.auth.FilePasswordAuthenticator \
        --hiveconf hive.server2.enable.doAs=false \
        > "$STATE/thrift.log" 2>&1 &
    echo $! > "$PIDFILE"
    for i in $(seq 1 300); do
        if (exec 3<>/dev/tcp/127.0.0.1/"$PORT") 2>/dev/null; then echo "thrift server up after ${i}s"; return; fi
        kill -0 "$(cat "$PIDFILE")" 2>/dev/null || { echo "thrift server died; see $STATE/thrift.log"; tail -20 "$STATE/thrift.log"; exit 1; }
        sleep 1
    done
    echo "thrift server did not open port $PORT in 300s; see $STATE/thrift.log"; exit 1
}

stop() {
    [ -f "$PIDFILE" ] || { echo "thrift server not running"; return; }
    local pid; pid=$(cat "$PIDFILE")
    if ! ours "$pid"; then
        rm -f "$PIDFILE"
        echo "thrift server not running (stale pid file: pid $pid is not the server)"
        return
    fi
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 30); do ours "$pid" || break; sleep 1; done
    if ours "$pid"; then kill -9 "$pid" 2>/dev/null || true; fi
    rm -f "$PIDFILE"
    echo "thrift server stopped"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    *) echo "usage: scripts/thrift.sh start|stop"; exit 2 ;;
esac
