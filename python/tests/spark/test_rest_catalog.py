"""The project's Iceberg REST catalog test server (java/rest-catalog/, scripts/rest_catalog.sh):
started by its script on 127.0.0.1, reached by Spark's RESTCatalog (a named `rest` catalog on
the test session) with a bearer token. Spark creates a namespace and a table, inserts and
MERGEs through it, and reads exact values back; creates, replaces and drops views; a request without the token, or with a
wrong one, gets 401; of two commits based on the same snapshot, the second gets 409
CommitFailedException (the compare-and-swap a concurrent writer meets); the script's stop
leaves no process. This is the server; test_rest_catalog_qrepl.py runs qrepl on it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import urllib.error
import urllib.request
from decimal import Decimal
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

PROJECT = Path(__file__).resolve().parents[3]
SCRIPT = PROJECT / "scripts" / "rest_catalog.sh"
CATALOG = "rest"
NS = "qrepl_rest"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def script(command: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), command], env=env, capture_output=True, text=True, timeout=180)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    state = tmp_path_factory.mktemp("rest-state")
    port = free_port()
    env = {**os.environ, "QREPL_STATE_DIR": str(state), "QREPL_REST_PORT": str(port)}
    started = script("start", env)
    assert started.returncode == 0, started.stdout + started.stderr
    token_file = state / "secrets" / "rest-token"
    info = {
        "env": env,
        "url": f"http://127.0.0.1:{port}",
        "token": token_file.read_text().strip(),
        "token_file": token_file,
        "warehouse": state / "rest" / "warehouse",
        "pid": int((state / "rest" / "rest.pid").read_text()),
    }
    yield info
    script("stop", env)


@pytest.fixture(scope="module")
def rest(spark, server):
    """The test session with a named Iceberg REST catalog `rest` (a catalog is loaded at its
    first use, so settings made now take effect)."""
    settings = {
        "": "org.apache.iceberg.spark.SparkCatalog",
        ".type": "rest",
        ".uri": server["url"],
        ".warehouse": str(server["warehouse"]),
        ".token": server["token"],
        ".cache-enabled": "false",  # every read sees commits made by other clients at once
    }
    for suffix, value in settings.items():
        spark.conf.set(f"spark.sql.catalog.{CATALOG}{suffix}", value)
    return spark


def call(server, method: str, path: str, body: dict | None = None, token: str | None = "__ours__"):
    """(status, parsed JSON body or None) of one request to the server."""
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {server['token'] if token == '__ours__' else token}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(server["url"] + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as err:
        raw = err.read()
        return err.code, json.loads(raw) if raw else None


def running(pid: int) -> bool:
    """Is the process alive? An exited one may linger as a zombie until its parent (here the
    machine's init, which reaps late) collects it: that one runs nothing and holds no port."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def rows(spark, table: str) -> list[tuple]:
    return [tuple(r) for r in spark.sql(f"select id, name, balance from {table} order by id").collect()]


def test_the_server_binds_loopback_and_keeps_its_token_owner_only(server):
    assert (server["token_file"].stat().st_mode & 0o777) == 0o600
    assert server["token"] not in Path(f"/proc/{server['pid']}/cmdline").read_bytes().decode(errors="replace")
    port_hex = f"{int(server['url'].rsplit(':', 1)[1]):04X}"
    listening = [  # local address of each listening socket (state 0A) on the port, IPv4 and IPv6
        fields[1]
        for name in ("tcp", "tcp6")
        for line in Path(f"/proc/net/{name}").read_text().splitlines()[1:]
        if (fields := line.split())[1].endswith(":" + port_hex) and fields[3] == "0A"
    ]
    assert listening == ["0100007F:" + port_hex]  # 127.0.0.1 only


def test_spark_creates_inserts_and_merges_through_the_rest_catalog(rest, server):
    table = f"{CATALOG}.{NS}.accounts"
    rest.sql(f"create namespace if not exists {CATALOG}.{NS}")
    rest.sql(f"create table {table} (id int, name string, balance decimal(12,2)) using iceberg")
    rest.sql(f"insert into {table} values (1, 'ann', 10.50), (2, 'bob', 20.00), (3, 'cy', 30.25)")
    assert rows(rest, table) == [
        (1, "ann", Decimal("10.50")),
        (2, "bob", Decimal("20.00")),
        (3, "cy", Decimal("30.25")),
    ]
    rest.sql(
        f"""merge into {table} t
        using (select * from values (2, 'bob', 25.00, 'U'), (3, 'cy', 0.00, 'D'), (4, 'dee', 40.75, 'U')
               as s(id, name, balance, op)) s
        on t.id = s.id
        when matched and s.op = 'D' then delete
        when matched then update set t.balance = s.balance
        when not matched then insert (id, name, balance) values (s.id, s.name, s.balance)"""
    )
    assert rows(rest, table) == [
        (1, "ann", Decimal("10.50")),
        (2, "bob", Decimal("25.00")),
        (4, "dee", Decimal("40.75")),
    ]
    assert [r[0] for r in rest.sql(f"show tables in {CATALOG}.{NS}").select("tableName").collect()] == ["accounts"]

    # the server holds what Spark committed: two snapshots (insert, MERGE), files under its warehouse
    status, loaded = call(server, "GET", f"/v1/namespaces/{NS}/tables/accounts")
    assert status == 200
    assert len(loaded["metadata"]["snapshots"]) == 2
    assert loaded["metadata-location"].startswith(("file:" + str(server["warehouse"]), str(server["warehouse"])))
    assert call(server, "HEAD", f"/v1/namespaces/{NS}/tables/accounts")[0] == 204
    assert call(server, "HEAD", f"/v1/namespaces/{NS}/tables/nothing")[0] == 404


def test_spark_creates_as_select_renames_and_drops_through_the_rest_catalog(rest, server):
    """CTAS is a staged create committed with its data; rename and drop purge are the spec's
    own endpoints."""
    rest.sql(f"create table {CATALOG}.{NS}.copy using iceberg as select * from {CATALOG}.{NS}.accounts where id < 4")
    assert rows(rest, f"{CATALOG}.{NS}.copy") == [(1, "ann", Decimal("10.50")), (2, "bob", Decimal("25.00"))]
    rest.sql(f"alter table {CATALOG}.{NS}.copy rename to {NS}.renamed")  # the target names no catalog
    assert call(server, "HEAD", f"/v1/namespaces/{NS}/tables/copy")[0] == 404
    assert rows(rest, f"{CATALOG}.{NS}.renamed")[1] == (2, "bob", Decimal("25.00"))
    rest.sql(f"drop table {CATALOG}.{NS}.renamed purge")
    assert call(server, "HEAD", f"/v1/namespaces/{NS}/tables/renamed")[0] == 404
    assert [r.tableName for r in rest.sql(f"show tables in {CATALOG}.{NS}").collect()] == ["accounts"]


def test_a_request_without_the_token_or_with_a_wrong_one_gets_401(server):
    for token in (None, "wrong", server["token"] + "x", ""):
        status, body = call(server, "GET", "/v1/config", token=token)
        assert status == 401, token
        assert body["error"]["type"] == "NotAuthorizedException"
        assert call(server, "GET", f"/v1/namespaces/{NS}/tables/accounts", token=token)[0] == 401
    assert call(server, "GET", "/v1/config")[0] == 200


def test_the_second_of_two_commits_on_the_same_snapshot_gets_409(rest, server):
    """Two writers both read the table at snapshot S and commit `main := P` asserting main is
    still S: the first wins, the second fails with 409 CommitFailedException and changes
    nothing; Spark then reads the table at P (before the MERGE)."""
    path = f"/v1/namespaces/{NS}/tables/accounts"
    _, loaded = call(server, "GET", path)
    current = loaded["metadata"]["current-snapshot-id"]
    parent = next(s["parent-snapshot-id"] for s in loaded["metadata"]["snapshots"] if s["snapshot-id"] == current)
    update = {
        "requirements": [{"type": "assert-ref-snapshot-id", "ref": "main", "snapshot-id": current}],
        "updates": [{"action": "set-snapshot-ref", "ref-name": "main", "type": "branch", "snapshot-id": parent}],
    }
    first = call(server, "POST", path, update)
    assert first[0] == 200, first
    assert first[1]["metadata"]["current-snapshot-id"] == parent
    status, body = call(server, "POST", path, update)
    assert status == 409, body
    assert body["error"]["type"] == "CommitFailedException"
    assert call(server, "GET", path)[1]["metadata"]["current-snapshot-id"] == parent
    assert rows(rest, f"{CATALOG}.{NS}.accounts") == [
        (1, "ann", Decimal("10.50")),
        (2, "bob", Decimal("20.00")),
        (3, "cy", Decimal("30.25")),
    ]


def test_spark_creates_replaces_by_drop_and_loads_views_through_the_rest_catalog(rest, server):
    """The view endpoints (advertised in /v1/config): what dbt's view materialization does,
    `create view ... tblproperties`, `show tblproperties`, `drop view` then create anew, and
    `create or replace view` (a view commit), each read back through Spark and the server."""
    status, config = call(server, "GET", "/v1/config")
    assert status == 200
    for endpoint in (
        "POST /v1/{prefix}/namespaces/{namespace}/views",
        "GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
        "POST /v1/{prefix}/namespaces/{namespace}/views/{view}",
        "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}",
        "POST /v1/{prefix}/views/rename",
    ):
        assert endpoint in config["endpoints"], endpoint
    view = f"{CATALOG}.{NS}.rich"
    rest.sql(
        f"create view {view} tblproperties ('qrepl.view_hash' = 'h1') as "
        f"select id, name from {CATALOG}.{NS}.accounts where balance > 15"
    )
    assert rest.sql(f"show tblproperties {view} ('qrepl.view_hash')").collect()[0].value == "h1"
    assert [tuple(r) for r in rest.sql(f"select * from {view} order by id").collect()] == [(2, "bob"), (3, "cy")]
    # show views also lists the session's temporary views (dbt's, when other tests ran before)
    assert [r.viewName for r in rest.sql(f"show views in {CATALOG}.{NS}").collect() if not r.isTemporary] == ["rich"]
    status, loaded = call(server, "GET", f"/v1/namespaces/{NS}/views/rich")
    assert status == 200 and loaded["metadata"]["properties"]["qrepl.view_hash"] == "h1"
    assert "balance > 15" in loaded["metadata"]["versions"][-1]["representations"][0]["sql"]
    assert call(server, "HEAD", f"/v1/namespaces/{NS}/views/rich")[0] == 204

    rest.sql(f"drop view {view}")  # replaced by drop: a new view, new properties and query
    assert call(server, "HEAD", f"/v1/namespaces/{NS}/views/rich")[0] == 404
    rest.sql(
        f"create view {view} tblproperties ('qrepl.view_hash' = 'h2') as "
        f"select id, balance from {CATALOG}.{NS}.accounts where balance > 25"
    )
    assert rest.sql(f"show tblproperties {view} ('qrepl.view_hash')").collect()[0].value == "h2"
    assert [tuple(r) for r in rest.sql(f"select * from {view}").collect()] == [(3, Decimal("30.25"))]

    rest.sql(f"create or replace view {view} as select name from {CATALOG}.{NS}.accounts where id = 1")
    assert [tuple(r) for r in rest.sql(f"select * from {view}").collect()] == [("ann",)]
    status, loaded = call(server, "GET", f"/v1/namespaces/{NS}/views/rich")
    assert len(loaded["metadata"]["versions"]) == 2  # the replace is a second version of the view
    rest.sql(f"drop view {view}")
    assert call(server, "HEAD", f"/v1/namespaces/{NS}/views/rich")[0] == 404
    assert [r for r in rest.sql(f"show views in {CATALOG}.{NS}").collect() if not r.isTemporary] == []


def test_a_token_file_others_can_read_is_refused(tmp_path):
    token_file = tmp_path / "secrets" / "rest-token"
    token_file.parent.mkdir(mode=0o700)
    token_file.write_text("a-token-others-could-read\n")
    token_file.chmod(0o644)
    env = {
        **os.environ,
        "QREPL_STATE_DIR": str(tmp_path),
        "QREPL_REST_PORT": str(free_port()),
        "QREPL_REST_TOKEN_FILE": str(token_file),
    }
    started = script("start", env)
    assert started.returncode != 0
    assert "readable by other users" in started.stdout + started.stderr
    assert not (tmp_path / "rest" / "rest.pid").exists()


def test_start_refuses_a_busy_port_and_a_password_on_the_command_line(tmp_path):
    env = {**os.environ, "QREPL_STATE_DIR": str(tmp_path)}
    with socket.socket() as other:  # another process's port: never taken for the server
        other.bind(("127.0.0.1", 0))
        other.listen()
        started = script("start", {**env, "QREPL_REST_PORT": str(other.getsockname()[1])})
    assert started.returncode == 1 and "in use by another process" in started.stdout, started.stdout
    uri = "jdbc:postgresql://127.0.0.1:5432/db?user=u&password=p"
    started = script("start", {**env, "QREPL_REST_PORT": str(free_port()), "QREPL_REST_JDBC_URI": uri})
    assert started.returncode == 1 and "must not carry a password" in started.stdout, started.stdout
    assert not (tmp_path / "rest" / "rest.pid").exists()


def test_the_script_stops_the_server_and_leaves_no_process(server):
    stopped = script("stop", server["env"])
    assert stopped.returncode == 0 and "REST catalog stopped" in stopped.stdout, stopped.stdout + stopped.stderr
    assert not running(server["pid"])
    assert script("status", server["env"]).returncode == 3
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", int(server["url"].rsplit(":", 1)[1])), timeout=5).close()
