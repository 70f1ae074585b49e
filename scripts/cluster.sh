#!/usr/bin/env bash
# A Spark standalone cluster on 127.0.0.1 from the PySpark distribution (docs/deploying.md):
# one master and one worker. The PySpark wheel has no sbin/ scripts; the classes are in spark-core.
# Both run with spark.authenticate=true: the shared secret is the owner-only file
# $QREPL_SPARK_SECRET_FILE (generated on first start, default $QREPL_DEPLOY_DIR/secrets/spark-secret),
# reaching the JVMs through the owner-only spark-defaults.conf in SPARK_CONF_DIR, never argv;
# an application needs it to register (docs/security.md).
#   scripts/cluster.sh start|stop
set -euo pipefail
umask 077  # logs, the worker's work dir and the executors it starts: owner-only
cd "$(dirname "$0")/.."
PY=.venv/bin/python
DEPLOY="${QREPL_DEPLOY_DIR:-$PWD/.qrepl_state/deploy}"
MASTER_PORT="${QREPL_MASTER_PORT:-7077}"
MASTER_UI_PORT="${QREPL_MASTER_UI_PORT:-8080}"
WORKER_UI_PORT="${QREPL_WORKER_UI_PORT:-8081}"
WORKER_CORES="${QREPL_WORKER_CORES:-2}"
WORKER_MEMORY="${QREPL_WORKER_MEMORY:-3g}"
DIR="$DEPLOY/cluster"
MASTER_URL="spark://127.0.0.1:$MASTER_PORT"
export QREPL_SPARK_SECRET_FILE="${QREPL_SPARK_SECRET_FILE:-$DEPLOY/secrets/spark-secret}"

# is the pid in PIDFILE (master.pid or worker.pid) this deployment's master or worker? By its
# command line: after a crash or a reboot the file may name a pid the system gave to any other
# process, which must be neither stopped nor taken for a running server
alive() {
    local cmd
    [ -f "$1" ] || return 1
    cmd=$(tr '\0' ' ' < "/proc/$(cat "$1")/cmdline" 2>/dev/null) || return 1
    case "$(basename "$1")" in
        master.pid) [[ "$cmd" == *org.apache.spark.deploy.master.Master* && "$cmd" == *"--port $MASTER_PORT "* ]] ;;
        worker.pid) [[ "$cmd" == *org.apache.spark.deploy.worker.Worker* && "$cmd" == *"--work-dir $DIR/work "* ]] ;;
        *) return 1 ;;
    esac
}

wait_port() {  # wait_port PORT PIDFILE NAME
    for i in $(seq 1 180); do
        if (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null; then echo "$3 up after ${i}s"; return; fi
        # twice, a second apart: a starting master was once taken for a dead one (its
        # /proc/PID/cmdline, read as spark-class was starting the JVM, did not name it)
        alive "$2" || { sleep 1; alive "$2"; } || { echo "$3 died; see ${2%.pid}.log"; tail -20 "${2%.pid}.log"; exit 1; }
        sleep 1
    done
    echo "$3 did not open port $1 in 180s; see ${2%.pid}.log"; exit 1
}

start() {
    mkdir -p "$DIR/work"
    $PY -m qrepl.storage.spark ensure-secret "$QREPL_SPARK_SECRET_FILE"
    { read -r SPARK_HOME; read -r _; read -r CONF_DIR; } < <(QREPL_STATE_DIR="$DEPLOY" $PY -m qrepl.storage.spark launch-settings)
    export SPARK_HOME SPARK_CONF_DIR="$CONF_DIR" SPARK_LOCAL_IP=127.0.0.1 TZ=UTC
    if alive "$DIR/master.pid"; then echo "spark master already running at $MASTER_URL"; else
        echo "starting Spark master at $MASTER_URL (web UI http://127.0.0.1:$MASTER_UI_PORT)"
        nohup "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.master.Master --host 127.0.0.1 \
            --port "$MASTER_PORT" --webui-port "$MASTER_UI_PORT" > "$DIR/master.log" 2>&1 &
        echo $! > "$DIR/master.pid"
        wait_port "$MASTER_PORT" "$DIR/master.pid" "spark master"
    fi
    if alive "$DIR/worker.pid"; then echo "spark worker already running"; else
        echo "starting Spark worker ($WORKER_CORES cores, $WORKER_MEMORY; web UI http://127.0.0.1:$WORKER_UI_PORT)"
        SPARK_WORKER_DIR="$DIR/work" nohup "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.worker.Worker \
            --host 127.0.0.1 --cores "$WORKER_CORES" --memory "$WORKER_MEMORY" --webui-port "$WORKER_UI_PORT" \
            --work-dir "$DIR/work" "$MASTER_URL" > "$DIR/worker.log" 2>&1 &
        echo $! > "$DIR/worker.pid"
        wait_port "$WORKER_UI_PORT" "$DIR/worker.pid" "spark worker"
        for _ in $(seq 1 30); do  # registered with the master? (its JSON status lists alive workers)
            curl -s "http://127.0.0.1:$MASTER_UI_PORT/json/" | grep -q '"aliveworkers" : [1-9]' && return
            sleep 1
        done
        echo "spark worker did not register with $MASTER_URL; see $DIR/worker.log"; exit 1
    fi
}

stop_one() {  # stop_one PIDFILE NAME
    [ -f "$1" ] || { echo "$2 not running"; return; }
    alive "$1" || { echo "$2 not running (stale pid file: pid $(cat "$1") is not it)"; rm -f "$1"; return; }
    local pid; pid=$(cat "$1")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 20); do alive "$1" || break; sleep 1; done
    if alive "$1"; then kill -9 "$pid" 2>/dev/null || true; fi
    rm -f "$1"
    echo "$2 stopped"
}

case "${1:-}" in
    start) start ;;
    stop) stop_one "$DIR/worker.pid" "spark worker"; stop_one "$DIR/master.pid" "spark master" ;;
    *) echo "usage: scripts/cluster.sh start|stop"; exit 2 ;;
esac
