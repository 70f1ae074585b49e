#!/usr/bin/env bash
# `make example`: examples/downstream, a team's own dbt project with qrepl as a package
# (docs/dbt-package.md), built with plain dbt on a workload the Python layer sets up: the
# publication, its rows and a queue whose first batch has conflicts (scenarios/publisher_wins_basic.json).
# State: $QREPL_STATE_DIR (the Makefile's .qrepl_state/example); schema `qrepl`, the profile's default.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
export PATH="$ROOT/.venv/bin:$PATH"
: "${QREPL_STATE_DIR:?set QREPL_STATE_DIR}"
unset QREPL_SCHEMA DBT_TARGET_PATH DBT_LOG_PATH
echo "example: the Python layer writes the publication and its queue ($QREPL_STATE_DIR)"
PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}" python "$ROOT/python/tests/e2e/plain_dbt_driver.py" \
    setup "$ROOT/scenarios/publisher_wins_basic.json"
cd "$ROOT/examples/downstream"
dbt deps --quiet
echo "example: dbt build in examples/downstream (qrepl's queue reader, then the project's models and tests)"
dbt build --vars '{qrepl_example_min_conflicts: 1}'
test -L dbt_packages/qrepl || test -d dbt_packages/qrepl
echo "example: ok"
