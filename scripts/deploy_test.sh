#!/usr/bin/env bash
# `make deploy-test`: start the shared topology (PostgreSQL, Spark master + worker, Thrift
# server on the cluster) in a fresh state dir, run scripts/deploy_test.py against it, and stop
# every process on exit, whatever happened. Ports differ from `make deploy-demo`'s so both can
# run on one machine.
set -euo pipefail
umask 077
cd "$(dirname "$0")/.."
export QREPL_DEPLOY_DIR="${QREPL_DEPLOY_DIR:-$PWD/.qrepl_state/deploy-test}"
export QREPL_PG_PORT="${QREPL_PG_PORT:-5434}" QREPL_MASTER_PORT="${QREPL_MASTER_PORT:-7078}"
export QREPL_MASTER_UI_PORT="${QREPL_MASTER_UI_PORT:-8090}" QREPL_WORKER_UI_PORT="${QREPL_WORKER_UI_PORT:-8091}"
export QREPL_THRIFT_PORT="${QREPL_THRIFT_PORT:-10001}"
# a previous run's leftovers (its processes were stopped by its own trap)
bash scripts/deploy.sh stop >/dev/null 2>&1 || true
bash scripts/postgres.sh destroy >/dev/null  # its data lives outside the state dir (postgres.sh)
rm -rf "$QREPL_DEPLOY_DIR"
CHILD=""
trap 'echo "stopping the topology"; bash scripts/deploy.sh stop' EXIT
# Ctrl-C / SIGTERM: the test driver stops its own processes (it handles SIGTERM), then EXIT stops the rest
trap '[ -n "$CHILD" ] && kill -TERM "$CHILD" 2>/dev/null; exit 130' INT TERM
bash scripts/deploy.sh start
# shellcheck disable=SC1091
source "$QREPL_DEPLOY_DIR/env.sh"
timeout --kill-after=60 "${QREPL_DEPLOY_TIMEOUT:-2400}" .venv/bin/python scripts/deploy_test.py main "$@" &
CHILD=$!
rc=0
wait "$CHILD" || rc=$?
# the same running topology, seen from another OS user: every door must be shut
# (scripts/other_user_check.sh; QREPL_OTHER_USER_CHECK=0 skips it)
if [ "$rc" = 0 ] && [ "${QREPL_OTHER_USER_CHECK:-1}" = 1 ]; then
    bash scripts/other_user_check.sh || rc=$?
fi
exit "$rc"
