#!/usr/bin/env bash
# `pip install .` into a fresh virtualenv, then run qrepl from a directory outside the checkout.
# Cheap by default: `qrepl --help` and the packaged dbt project located and parsed by dbt's
# own project loader. FULL=1 also runs `qrepl demo` there (about 2 min of CPU).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d /tmp/qrepl-package.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT

# Build from the files the repository holds (tracked or new, never ignored ones), so nothing
# left over in a local build/ or .venv/ can make the package look complete.
mkdir "$WORK/src"
(cd "$ROOT" && git ls-files -co --exclude-standard -z | xargs -0 tar -cf - --no-recursion) | tar -xf - -C "$WORK/src"

echo "package-check: fresh venv in $WORK/venv, pip install . (pins from requirements.lock)"
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q --disable-pip-version-check -c "$ROOT/requirements.lock" "$WORK/src"

mkdir "$WORK/run" && cd "$WORK/run"
unset QREPL_STATE_DIR QREPL_PROJECT_DIR DBT_TARGET_PATH DBT_LOG_PATH  # as a user outside the checkout (make exports some)
"$WORK/venv/bin/qrepl" --help > /dev/null
echo "package-check: qrepl --help ok"
"$WORK/venv/bin/python" - <<'PY'
from pathlib import Path
import qrepl.storage.spark as spark

project = spark.PROJECT_DIR
assert Path(spark.__file__).parents[1] / "dbt_project" == project, f"not the packaged project: {project}"
for part in ("dbt_project.yml", "models/marts/conflicts.sql", "macros/judge/judge_command.sql",
             "profiles.yml", "seeds/demo_customers.csv", "publications/sales.yml"):
    assert (project / part).is_file(), f"missing from the package: {part}"
assert spark.WORK_DIR == Path.cwd().resolve() and spark.state_dir() == Path.cwd().resolve() / ".qrepl_state"
from qrepl.services import viewer  # its templates are package data
from qrepl.storage.spark import LOCK_TABLES_SQL  # package data too

assert LOCK_TABLES_SQL.is_file(), f"missing from the package: {LOCK_TABLES_SQL}"

viewer.render_viewer([], Path("viewer"))
print(f"package-check: packaged dbt project at {project}; state and outputs under {Path.cwd()}")
PY
# dbt itself reads the packaged project (parse needs no Spark session); target/ lands here
PROJECT="$("$WORK/venv/bin/python" -c 'from qrepl.storage.spark import PROJECT_DIR; print(PROJECT_DIR)')"
DBT_TARGET_PATH="$PWD/target" DBT_LOG_PATH="$PWD/logs" "$WORK/venv/bin/dbt" parse --quiet \
    --project-dir "$PROJECT" --profiles-dir "$PROJECT"
test -s target/manifest.json
echo "package-check: dbt parse of the packaged project ok"
if [ "${FULL:-0}" = "1" ]; then
    "$WORK/venv/bin/qrepl" demo
    test -s out/demo-viewer/index.html && test -d target && test -d .qrepl_state
    echo "package-check: qrepl demo ok from $PWD (viewer, dbt target/ and Spark state written here)"
fi
