"""`qrepl dbt docs generate` after a queue-reader run, served on 127.0.0.1 and opened in headless
Chromium: the lineage graph a user sees runs from the replication_queue source to the
conflicts mart and on to the conflict viewer exposure (docs/architecture.md)."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from qrepl.cli import main
from qrepl.tools.replay import SparkBackend, load_scenario, play

pytestmark = [pytest.mark.browser, pytest.mark.spark]

SCHEMA = "qrepl_docs_browser"
SCENARIO = Path(__file__).resolve().parents[3] / "scenarios" / "publisher_wins_basic.json"
QUEUE = "source.qrepl.qrepl.replication_queue"
CONFLICTS = "model.qrepl.conflicts"
VIEWER = "exposure.qrepl.conflict_viewer"


@pytest.fixture(scope="module")
def docs_url(spark, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A schema with one run done, its docs generated through the CLI, the site served by a
    python http.server thread on 127.0.0.1 (dbt docs fetch manifest.json and catalog.json)."""
    scenario = load_scenario(SCENARIO)
    first_run = next(i for i, step in enumerate(scenario.steps) if "run" in step)
    scenario.steps = scenario.steps[: first_run + 1]  # one run builds every table the docs describe
    play(scenario, SparkBackend(scenario, schema=SCHEMA))
    result = CliRunner().invoke(main, ["dbt", "docs", "generate", "--schema", SCHEMA])
    assert result.exit_code == 0, result.output

    from qrepl.storage.spark import WORK_DIR

    target = Path(os.environ.get("DBT_TARGET_PATH", WORK_DIR / "target"))
    site = tmp_path_factory.mktemp("dbt-docs")
    for name in ("index.html", "manifest.json", "catalog.json"):
        shutil.copy2(target / name, site / name)  # a snapshot: later dbt calls rewrite target/

    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def shown_graph(driver: Any) -> dict[str, Any]:
    """The lineage graph as drawn: the visible nodes and edges of dbt docs' cytoscape instance."""
    return driver.execute_script("""
        const g = window.graph;
        if (!g) return null;
        return {
          nodes: g.nodes().filter(n => n.visible()).map(n => ({id: n.id(), label: n.data('label')})),
          edges: g.edges().filter(e => e.visible()).map(e => [e.source().id(), e.target().id()]),
        };
    """)


def test_docs_lineage_graph_shows_queue_to_conflicts_to_viewer(driver: Any, docs_url: str, artifacts: Path) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get("about:blank")
    # the conflicts page with its lineage graph open on `--select +conflicts+`, as a user gets it
    driver.get(docs_url + "#!/model/" + CONFLICTS + "?g_v=1&g_i=%2Bconflicts%2B")
    WebDriverWait(driver, 60).until(lambda d: (g := shown_graph(d)) and any(n["id"] == QUEUE for n in g["nodes"]))
    graph = shown_graph(driver)

    nodes = {n["id"]: n["label"] for n in graph["nodes"]}
    assert {QUEUE, CONFLICTS, VIEWER} <= nodes.keys()
    assert nodes[QUEUE].endswith("replication_queue") and nodes[CONFLICTS] == "conflicts"

    children: dict[str, set[str]] = {}
    for source, target in graph["edges"]:
        children.setdefault(source, set()).add(target)

    def path(start: str, goal: str) -> list[str] | None:
        todo, came_from = [start], {start: None}
        while todo:
            node = todo.pop(0)
            if node == goal:
                steps = []
                while node:
                    steps.append(node)
                    node = came_from[node]
                return steps[::-1]
            for nxt in sorted(children.get(node, ())):
                if nxt not in came_from:
                    came_from[nxt] = node
                    todo.append(nxt)
        return None

    to_conflicts = path(QUEUE, CONFLICTS)
    assert to_conflicts, f"no drawn path from replication_queue to conflicts: {sorted(graph['edges'])}"
    assert "model.qrepl.int_queued_commands_judged" in to_conflicts
    assert VIEWER in children[CONFLICTS]
    assert "model.qrepl.compensating_commands" not in nodes  # not in conflicts' lineage: the selection applied

    target = artifacts / "dbt_docs_lineage.png"
    assert driver.save_screenshot(str(target))
    assert target.stat().st_size > 10_000
    # the drawn graph alone, 2400 pixels wide, from dbt docs' cytoscape instance: the picture of
    # the lineage in docs/architecture.md is a copy of it (docs/img/lineage.png)
    import base64

    uri = driver.execute_script(
        "return window.graph.png({output: 'base64uri', full: true, maxWidth: 2400, bg: '#ffffff'});"
    )
    assert uri.startswith("data:image/png;base64,")
    graph_png = artifacts / "dbt_docs_lineage_graph.png"
    graph_png.write_bytes(base64.b64decode(uri.split(",", 1)[1]))
    assert graph_png.stat().st_size > 10_000

    # dbt docs' own page requests a few URLs that are unrendered templates ("{{ getIcon(...) }}",
    # "${require('./assets/favicons/favicon.ico')}"): a 404 in every dbt docs site. Anything else
    # failing (a script error, manifest.json or catalog.json not loading) is ours.
    errors = [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    assert [m for m in errors if not (m.startswith(docs_url) and "%7B" in m.split()[0])] == []
