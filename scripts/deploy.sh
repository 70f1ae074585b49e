#!/usr/bin/env bash
# The shared topology on one machine (docs/deploying.md): PostgreSQL holding the Hive
# metastore, a Spark standalone master + worker, and the Spark Thrift Server running as an
# application on that cluster. Every qrepl process that sources $QREPL_DEPLOY_DIR/env.sh opens
# its own Spark session on the same metastore and warehouse.
#   scripts/deploy.sh start   # PostgreSQL, metastore schema, cluster, Thrift server
#   scripts/deploy.sh stop    # all of them, in reverse order
set -euo pipefail
cd "$(dirname "$0")/.."
export QREPL_DEPLOY_DIR="${QREPL_DEPLOY_DIR:-$PWD/.qrepl_state/deploy}"
ENV_FILE="$QREPL_DEPLOY_DIR/env.sh"

write_env() {
    mkdir -p "$QREPL_DEPLOY_DIR"
    local metastore; metastore=$(bash scripts/postgres.sh url)
    (umask 077; cat > "$ENV_FILE" <<ENV
# qrepl deployment settings (source this file; it holds the metastore password)
export QREPL_METASTORE='$metastore'
export QREPL_WAREHOUSE='$QREPL_DEPLOY_DIR/warehouse'
export QREPL_STATE_DIR='$QREPL_DEPLOY_DIR'
export QREPL_SPARK_MASTER='${QREPL_SPARK_MASTER:-local[1]}'
export QREPL_DRIVER_MEMORY='${QREPL_DRIVER_MEMORY:-1g}'
export QREPL_THRIFT_HOST=127.0.0.1
export QREPL_THRIFT_PORT='${QREPL_THRIFT_PORT:-10000}'
export QREPL_THRIFT_MASTER='spark://127.0.0.1:${QREPL_MASTER_PORT:-7077}'
export QREPL_DEPLOY_DIR='$QREPL_DEPLOY_DIR'
ENV
    )
}

start() {
    bash scripts/postgres.sh start
    write_env
    # shellcheck disable=SC1090
    source "$ENV_FILE"
    # the cluster needs no metastore: it starts while the metastore is prepared
    bash scripts/cluster.sh start > "$QREPL_DEPLOY_DIR/cluster-start.log" 2>&1 &
    local cluster_pid=$!
    marker="$QREPL_DEPLOY_DIR/.metastore_initialized"
    if [ ! -f "$marker" ]; then
        echo "creating the metastore schema and Hive lock tables (one JVM, before any other)"
        .venv/bin/python -m qrepl.spark init-metastore
        touch "$marker"
    fi
    local cluster_rc=0
    wait "$cluster_pid" || cluster_rc=$?
    cat "$QREPL_DEPLOY_DIR/cluster-start.log"
    [ "$cluster_rc" = 0 ] || exit "$cluster_rc"
    bash scripts/thrift.sh start
    echo "topology up; settings for every qrepl process: source $ENV_FILE"
}

stop() {
    local rc=0
    [ -f "$ENV_FILE" ] && source "$ENV_FILE"
    QREPL_STATE_DIR="$QREPL_DEPLOY_DIR" bash scripts/thrift.sh stop || rc=1
    bash scripts/cluster.sh stop || rc=1
    bash scripts/postgres.sh stop || rc=1
    return $rc
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    *) echo "usage: scripts/deploy.sh start|stop"; exit 2 ;;
esac
