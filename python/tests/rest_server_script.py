"""The REST catalog test server as the tests drive it: through its own script
(scripts/rest_catalog.sh start|stop|status) on a free loopback port."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from qrepl.storage.spark import REST_ENV

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "rest_catalog.sh"
QREPL_ENV = REST_ENV


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def script(command: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), command], env=env, capture_output=True, text=True, timeout=180)


@contextmanager
def rest_server(state: Path, **settings: str) -> Iterator[dict]:
    """The server started by its script with its state (token, catalog, warehouse) under
    `state`, on a free port, and the script's other `settings` (QREPL_REST_TOKEN_TTL=...);
    stopped by the script on leaving. Yields its URI, token file and warehouse."""
    port = free_port()
    env = {**os.environ, "QREPL_STATE_DIR": str(state), "QREPL_REST_PORT": str(port), **settings}
    started = script("start", env)
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        yield {
            "uri": f"http://127.0.0.1:{port}",
            "token_file": state / "secrets" / "rest-token",
            "warehouse": state / "rest" / "warehouse",
        }
    finally:
        script("stop", env)


def qrepl_env(state: Path, catalog_env: dict[str, str]) -> dict[str, str]:
    """The environment of a qrepl process of its own (a test's driver): this one without any
    catalog setting, then `catalog_env`, a state directory `state` and a 1 GB driver."""
    env = {k: v for k, v in os.environ.items() if k not in QREPL_ENV and k != "QREPL_METASTORE"}
    env.update({"QREPL_STATE_DIR": str(state), "QREPL_DRIVER_MEMORY": "1g", **catalog_env})
    env.update({"DBT_TARGET_PATH": str(state / "target"), "DBT_LOG_PATH": str(state / "logs")})
    return env


def rest_env(server: dict) -> dict[str, str]:
    """QREPL_CATALOG=rest on `server` (rest_server's)."""
    return {
        "QREPL_CATALOG": "rest",
        "QREPL_REST_URI": server["uri"],
        "QREPL_REST_WAREHOUSE": str(server["warehouse"]),
        "QREPL_REST_TOKEN_FILE": str(server["token_file"]),
    }
