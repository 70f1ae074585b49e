#!/usr/bin/env bash
# Runs a command on the REST catalog (QREPL_CATALOG=rest), as it runs on Hive: the REST catalog
# test server started here on a free loopback port with a state of its own ($DIR/server), the
# command's own state beside it ($DIR/run), the server stopped by its pid at the end.
#   scripts/on_rest_catalog.sh NAME COMMAND...     (DIR = $QREPL_STATE_DIR/NAME, emptied first)
# `make test-rest` (the run lock and crash-kill tests), `make conformance-rest` and
# `make bench-rest` use it (docs/testing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
[ $# -ge 2 ] || { echo "usage: scripts/on_rest_catalog.sh NAME COMMAND..." >&2; exit 2; }
[[ "$1" =~ ^[A-Za-z0-9_-]+$ ]] || { echo "on_rest_catalog.sh: NAME must be letters, digits, - or _" >&2; exit 2; }
DIR="${QREPL_STATE_DIR:-$PWD/.qrepl_state}/$1"
shift
rm -rf "$DIR"
mkdir -p -m 700 "$DIR"
PORT=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
server() { QREPL_STATE_DIR="$DIR/server" QREPL_REST_PORT="$PORT" bash scripts/rest_catalog.sh "$1"; }
# the caller's catalog settings (qrepl.storage.spark.REST_ENV) do not reach the command: it gets this server's
unset_env=(-u QREPL_METASTORE)
for name in $($PY -c 'from qrepl.storage.spark import REST_ENV; print(*REST_ENV)'); do unset_env+=(-u "$name"); done
server start
trap 'server stop' EXIT
env "${unset_env[@]}" QREPL_CATALOG=rest QREPL_REST_URI="http://127.0.0.1:$PORT" \
    QREPL_REST_WAREHOUSE="$DIR/server/rest/warehouse" QREPL_REST_TOKEN_FILE="$DIR/server/secrets/rest-token" \
    QREPL_STATE_DIR="$DIR/run" DBT_TARGET_PATH="$DIR/run/target" DBT_LOG_PATH="$DIR/run/logs" \
    "$@"
