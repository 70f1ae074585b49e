"""The REST catalog test server as the tests drive it: through its own script
(scripts/rest_catalog.sh start|stop|status) on a free loopback port."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "rest_catalog.sh"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def script(command: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), command], env=env, capture_output=True, text=True, timeout=180)
