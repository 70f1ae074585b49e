"""qrepl's own session (get_spark) on the REST catalog the environment names, authenticated as
QREPL_REST_PROPERTIES_FILE says: creates a namespace and a table, inserts, reads them back and
prints them as one RESULT line; while its JVM is up, writes the command line of every process
of this user to WORK/argv.txt (test_rest_oauth.py looks for the secret there). Between the
insert and the read it waits PAUSE seconds (argv[2]): longer than the server's tokens live, so
the read needs the token Iceberg's client refreshed."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def command_lines() -> str:
    lines = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and proc.stat().st_uid == os.getuid():
                lines.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:  # a process gone meanwhile
            continue
    return "\n".join(lines)


def main(work: Path, pause: float) -> None:
    from qrepl.storage.spark import get_spark

    spark = get_spark()
    spark.sql("create namespace if not exists oauth_ns")
    spark.sql("create table oauth_ns.t (id int, v string) using iceberg")
    spark.sql("insert into oauth_ns.t values (1, 'a'), (2, 'b')")
    time.sleep(pause)
    rows = [tuple(r) for r in spark.sql("select id, v from oauth_ns.t order by id").collect()]
    (work / "argv.txt").write_text(command_lines())
    print("RESULT " + json.dumps({"rows": rows}))


if __name__ == "__main__":
    main(Path(sys.argv[1]), float(sys.argv[2]))
