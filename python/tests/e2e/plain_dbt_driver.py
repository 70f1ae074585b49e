"""The Python layer's side of a plain-dbt run (test_plain_dbt.py, `make example`): a process of
its own, since the embedded Derby metastore admits one JVM and dbt starts the next one.

    python plain_dbt_driver.py setup SCENARIO        # the publication, its rows and queue, up to the first run
    python plain_dbt_driver.py outputs SCENARIO OUT  # what the run wrote, as `qrepl replay` writes it, to OUT
    python plain_dbt_driver.py lock HOLDER           # the run lock, as a plain dbt run named HOLDER takes it

Schema: $QREPL_SCHEMA, else `qrepl` (the profile's default); state: $QREPL_STATE_DIR.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from qrepl.tools.replay import SparkBackend, load_scenario, normalized_outputs, play, scenario_from_dict


def first_batch(path: Path):
    """The scenario's steps before its first run: what a scheduler's first `dbt build` finds."""
    data = json.loads(path.read_text())
    data["steps"] = data["steps"][: next(i for i, s in enumerate(data["steps"]) if "run" in s)]
    return scenario_from_dict(data, path.stem)


def main(argv: list[str]) -> int:
    mode, path = argv[0], Path(argv[1])
    schema = os.environ.get("QREPL_SCHEMA", "qrepl")
    if mode == "lock":
        from qrepl.storage.spark import get_spark

        get_spark().sql(
            f"create table {schema}.qrepl_run_lock using iceberg "
            f"tblproperties ('qrepl.holder' = '{argv[1]}', 'qrepl.acquired_at' = 'now') "
            f"as select 'held' as token, cast(0 as bigint) as renewals, current_timestamp() as renewed_at, "
            f"cast(null as int) as lease_seconds"
        )
        return 0
    if mode == "setup":
        scenario = first_batch(path)
        play(scenario, SparkBackend(scenario, schema))
        print(f"schema {schema}: publication {scenario.publication.name}, queue written")
        return 0
    scenario = load_scenario(path)
    tables = normalized_outputs(scenario, SparkBackend.attach(scenario, schema).outputs())
    Path(argv[2]).write_text(json.dumps(tables, sort_keys=True, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
