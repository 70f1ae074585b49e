#!/usr/bin/env bash
# The dbt build through a real Spark Thrift Server: prepare a scenario's tables with the
# embedded Spark, hand the metastore to the Thrift server, `dbt build --target thrift`,
# run two queue readers at once against it, then check the results against the sequential
# reference.
set -euo pipefail
umask 077
cd "$(dirname "$0")/.."
export QREPL_STATE_DIR="$PWD/.qrepl_state/thrift"
export QREPL_SCHEMA=qrepl_thrift QREPL_THRIFT_PORT="${QREPL_THRIFT_PORT:-10000}"
SCENARIO=scenarios/publisher_wins_basic.json
rm -rf "$QREPL_STATE_DIR"
.venv/bin/python -m qrepl.tools.thrift_check prepare "$SCENARIO"
trap 'bash scripts/thrift.sh stop' EXIT
bash scripts/thrift.sh start
# the server's generated password (scripts/thrift.sh), for dbt (profiles.yml) and PyHive
QREPL_THRIFT_PASSWORD="$(cat "$QREPL_STATE_DIR/secrets/thrift-password")"
export QREPL_THRIFT_PASSWORD
QREPL_TARGET=thrift .venv/bin/dbt build --project-dir . --profiles-dir . --target thrift
# two queue readers at once on one server (a CI job and a scheduler): the run lock lets one
# through and refuses the other with one line; no batch is cut twice
.venv/bin/python python/tests/e2e/thrift_two_runs.py "$QREPL_SCHEMA"
bash scripts/thrift.sh stop
trap - EXIT
.venv/bin/python -m qrepl.tools.thrift_check verify "$SCENARIO"
