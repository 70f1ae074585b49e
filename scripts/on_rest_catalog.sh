#!/usr/bin/env bash
# The run lock and crash-kill tests on the REST catalog (QREPL_CATALOG=rest), as CI runs them on
# Hive: the REST catalog test server started here on a free loopback port with a state of its own
# ($STATE/rest-test/server), the tests' own state beside it, the server stopped by its pid at the
# end. About 7 min on two cores, so not in CI (docs/testing.md). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
DIR="${QREPL_STATE_DIR:-$PWD/.qrepl_state}/rest-test"
rm -rf "$DIR"
mkdir -p -m 700 "$DIR"
PORT=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
server() { QREPL_STATE_DIR="$DIR/server" QREPL_REST_PORT="$PORT" bash scripts/rest_catalog.sh "$1"; }
server start
trap 'server stop' EXIT
env -u QREPL_METASTORE QREPL_CATALOG=rest QREPL_REST_URI="http://127.0.0.1:$PORT" \
    QREPL_REST_WAREHOUSE="$DIR/server/rest/warehouse" QREPL_REST_TOKEN_FILE="$DIR/server/secrets/rest-token" \
    QREPL_STATE_DIR="$DIR/tests" DBT_TARGET_PATH="$DIR/tests/target" DBT_LOG_PATH="$DIR/tests/logs" \
    $PY -m pytest -q --durations=5 python/tests/spark/test_run_lock.py python/tests/e2e/test_crash_kill.py "$@"
