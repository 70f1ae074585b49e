"""A process to kill for the Python layer's write paths (see python_layer_ops.py):

    python layer_driver.py setup              # the base state (publication, subscribers, a run)
    python layer_driver.py op OP              # OP once; QREPL_FAULT=kill:K makes it die at write K
    python layer_driver.py recover OP OUT     # OP again (the rerun after a crash), state to OUT
    python layer_driver.py read OP OUT        # the state to OUT, nothing run
    python layer_driver.py count OP OUT       # OP once, uninterrupted: its writes and state to OUT

All in the state directory $QREPL_STATE_DIR.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # python/tests: the shared helpers

from python_layer_ops import OPERATIONS, RETRY_IS_NEW_WORK, SCHEMA, build_base, captured_commands, state  # noqa: E402
from qrepl.storage import faults  # noqa: E402
from qrepl.storage.spark import get_spark  # noqa: E402
from qrepl.storage.warehouse import Warehouse  # noqa: E402


def main(argv: list[str]) -> int:
    mode = argv[0]
    spark = get_spark()
    if mode == "setup":
        build_base(spark)
        return 0
    wh = Warehouse(spark, SCHEMA)
    op = OPERATIONS[argv[1]]
    tmp = Path(tempfile.mkdtemp())
    if mode == "op":
        op(wh, tmp)
        return 0
    if mode == "count":
        faults.arm(10**9, faults.raise_fault)
        op(wh, tmp)
        writes = faults.disarm()
        Path(argv[2]).write_text(json.dumps({"writes": writes, "state": state(wh)}))
        return 0
    if mode == "recover" and argv[1] in RETRY_IS_NEW_WORK:
        queued = captured_commands(wh)
        if queued not in (0, 2):
            print(f"a partial transaction is visible: {queued} of 2 commands queued", file=sys.stderr)
            return 1
        if not queued:
            op(wh, tmp)
    elif mode == "recover":
        op(wh, tmp)  # the ordinary rerun
    Path(argv[2]).write_text(json.dumps({"state": state(wh)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
