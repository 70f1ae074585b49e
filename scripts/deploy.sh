#!/usr/bin/env bash
# The shared topology on one machine (docs/deploying.md): PostgreSQL holding the Hive
# metastore, a Spark standalone master + worker, and the Spark Thrift Server running as an
# application on that cluster. Every qrepl process that sources $QREPL_DEPLOY_DIR/env.sh opens
# its own Spark session on the same metastore and warehouse.
#   scripts/deploy.sh start   # PostgreSQL, metastore schema, cluster, Thrift server
#   scripts/deploy.sh stop    # all of them, in reverse order
# Everything here is owner-only (umask 077): the state dir, warehouse, logs, secrets; the
# secrets (metastore password, Thrift password, cluster secret) live in owner-only files and
# reach processes by file or environment, never a command line (docs/security.md).
set -euo pipefail
umask 077
cd "$(dirname "$0")/.."
export QREPL_DEPLOY_DIR="${QREPL_DEPLOY_DIR:-$PWD/.qrepl_state/deploy}"
ENV_FILE="$QREPL_DEPLOY_DIR/env.sh"
SECRETS="$QREPL_DEPLOY_DIR/secrets"

write_env() {
    mkdir -p -m 700 "$QREPL_DEPLOY_DIR"
    chmod 700 "$QREPL_DEPLOY_DIR"  # a directory left open by an older qrepl
    .venv/bin/python -m qrepl.storage.spark ensure-secret "$SECRETS/spark-secret"
    .venv/bin/python -m qrepl.storage.spark ensure-secret "$SECRETS/thrift-password"
    local metastore; metastore=$(bash scripts/postgres.sh url)
    rm -f "$ENV_FILE.tmp"
    # created owner-only from its first byte (umask 077, noclobber: O_EXCL), then renamed
    (set -C; cat > "$ENV_FILE.tmp" <<ENV
# qrepl deployment settings (source this file; it holds the metastore password, and reads the
# Thrift password from its owner-only file into this shell's environment)
export QREPL_METASTORE='$metastore'
export QREPL_WAREHOUSE='$QREPL_DEPLOY_DIR/warehouse'
export QREPL_STATE_DIR='$QREPL_DEPLOY_DIR'
export QREPL_SPARK_MASTER='${QREPL_SPARK_MASTER:-local[1]}'
export QREPL_DRIVER_MEMORY='${QREPL_DRIVER_MEMORY:-1g}'
export QREPL_THRIFT_HOST=127.0.0.1
export QREPL_THRIFT_PORT='${QREPL_THRIFT_PORT:-10000}'
export QREPL_THRIFT_MASTER='spark://127.0.0.1:${QREPL_MASTER_PORT:-7077}'
export QREPL_DEPLOY_DIR='$QREPL_DEPLOY_DIR'
export QREPL_SPARK_SECRET_FILE='$SECRETS/spark-secret'
export QREPL_THRIFT_PASSWORD_FILE='$SECRETS/thrift-password'
export QREPL_THRIFT_USER='${QREPL_THRIFT_USER:-qrepl}'
QREPL_THRIFT_PASSWORD="\$(cat '$SECRETS/thrift-password')"
export QREPL_THRIFT_PASSWORD
ENV
    )
    mv -f "$ENV_FILE.tmp" "$ENV_FILE"
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
        .venv/bin/python -m qrepl.storage.spark init-metastore
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
