"""OAuth2 client credentials on the REST catalog, for real: the project's REST test server
(scripts/rest_catalog.sh) issues tokens at POST /v1/oauth/tokens to the client whose secret is
in its owner-only file; qrepl's session, with no QREPL_REST_TOKEN_FILE and
`credential=qrepl:<secret>` in the owner-only QREPL_REST_PROPERTIES_FILE, creates, writes and
reads a table through it (rest_oauth_driver.py), outliving the tokens (TTL seconds each: the
client refreshes them by a token exchange). The secret is on no process's command line
and in no file the session writes but the owner-only spark-defaults.conf; a wrong secret is
the server's 401 (the REST spec's OAuthError) and one line from `qrepl status`."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from rest_server_script import qrepl_env, rest_server

pytestmark = pytest.mark.spark

DRIVER = Path(__file__).with_name("rest_oauth_driver.py")
TTL = 6  # seconds a token the server issues lives (QREPL_REST_TOKEN_TTL)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    state = tmp_path_factory.mktemp("rest-oauth-server")
    with rest_server(state, QREPL_REST_TOKEN_TTL=str(TTL)) as info:
        secret_file = state / "secrets" / "rest-client-secret"
        yield {**info, "secret": secret_file.read_text().strip(), "secret_file": secret_file}


def oauth_env(server: dict, work: Path, credential: str) -> dict[str, str]:
    """QREPL_CATALOG=rest on `server` with `credential` in an owner-only properties file and no
    token file."""
    work.mkdir(mode=0o700, parents=True, exist_ok=True)
    properties = work / "rest.properties"
    properties.write_text(f"# OAuth2 client credentials\ncredential={credential}\nscope=catalog\n")
    properties.chmod(0o600)
    return qrepl_env(
        work / "state",
        {
            "QREPL_CATALOG": "rest",
            "QREPL_REST_URI": server["uri"],
            "QREPL_REST_WAREHOUSE": str(server["warehouse"]),
            "QREPL_REST_PROPERTIES_FILE": str(properties),
        },
    )


def token_request(server: dict, form: dict[str, str]) -> tuple[int, dict]:
    data = urllib.parse.urlencode(form).encode()
    request = urllib.request.Request(server["uri"] + "/v1/oauth/tokens", data=data, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def get_namespaces(server: dict, token: str) -> int:
    request = urllib.request.Request(server["uri"] + "/v1/namespaces", headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as err:
        return err.code


def test_the_token_endpoint_issues_a_short_lived_bearer_token_for_the_client_secret_and_401_for_a_wrong_one(server):
    assert server["secret_file"].stat().st_mode & 0o077 == 0
    grant = {"grant_type": "client_credentials", "client_id": "qrepl", "scope": "catalog"}
    status, body = token_request(server, {**grant, "client_secret": server["secret"]})
    assert status == 200 and body["token_type"] == "bearer" and body["expires_in"] == TTL
    assert body["issued_token_type"] == "urn:ietf:params:oauth:token-type:access_token"
    token = body["access_token"]
    assert get_namespaces(server, token) == 200  # the issued token is a bearer token the catalog accepts
    exchange = {
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
        "subject_token": token,
        "subject_token_type": "urn:ietf:params:oauth:token-type:access_token",
    }
    status, body = token_request(server, exchange)  # how Iceberg's client refreshes its token
    assert status == 200 and get_namespaces(server, body["access_token"]) == 200
    time.sleep(TTL + 1)
    assert get_namespaces(server, token) == 401  # expired
    assert token_request(server, exchange)[0] == 401  # nor exchanged once expired
    assert token_request(server, {**grant, "client_secret": "wrong"}) == (
        401,
        {"error": "invalid_client", "error_description": "unknown client or wrong client secret"},
    )
    status, body = token_request(server, {**grant, "client_id": "other", "client_secret": server["secret"]})
    assert (status, body["error"]) == (401, "invalid_client")
    status, body = token_request(server, {"grant_type": "password"})
    assert (status, body["error"]) == (400, "unsupported_grant_type")


def test_qrepl_creates_writes_and_reads_a_table_with_oauth2_client_credentials(server, tmp_path):
    secret = server["secret"]
    env = oauth_env(server, tmp_path, f"qrepl:{secret}")
    log = server["warehouse"].parent / "rest.log"
    exchanges = log.read_text().count("(urn:ietf:params:oauth:grant-type:token-exchange)")
    done = subprocess.run(
        [sys.executable, str(DRIVER), str(tmp_path), str(2 * TTL)], env=env, capture_output=True, text=True, timeout=300
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stdout[-3000:] + done.stderr[-3000:]
    assert json.loads(lines[-1][len("RESULT ") :]) == {"rows": [[1, "a"], [2, "b"]]}
    # the session outlived its first token: the client refreshed it by a token exchange
    assert log.read_text().count("(urn:ietf:params:oauth:grant-type:token-exchange)") > exchanges
    # the secret: on no command line (the JVM's included) and in no output or file qrepl wrote,
    # but the owner-only spark-defaults.conf
    argv = (tmp_path / "argv.txt").read_text()
    assert "spark-submit" in argv or "SparkSubmit" in argv  # the JVM was up when they were read
    # (booleans first: pytest would print the operands of `in`, the secret among them)
    on_argv, in_output = secret in argv, secret in done.stdout + done.stderr
    assert not on_argv, "the secret is on a command line"
    assert not in_output, "the secret is in the driver's output"
    conf = tmp_path / "state" / "conf" / "spark-defaults.conf"
    assert f"credential qrepl:{secret}" in conf.read_text() and conf.stat().st_mode & 0o077 == 0
    written = [p for p in (tmp_path / "state").rglob("*") if p.is_file() and p != conf]
    assert written  # the state dir holds files (Spark's conf, logs): none holds the secret
    assert [p.name for p in written if secret.encode() in p.read_bytes()] == []
    in_server_log = secret in (server["warehouse"].parent / "rest.log").read_text()
    assert not in_server_log, "the secret is in the server's log"


def test_a_wrong_client_secret_is_one_line_naming_the_servers_refusal(server, tmp_path):
    env = oauth_env(server, tmp_path, "qrepl:not-the-secret")
    done = subprocess.run(
        [sys.executable, "-m", "qrepl.cli", "status"], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"qrepl: error: the REST catalog at {server['uri']} refused qrepl's session: "
        "org.apache.iceberg.exceptions.NotAuthorizedException: Not authorized: invalid_client: "
        "unknown client or wrong client secret (--debug shows the whole error)"
    ]
    assert "not-the-secret" not in done.stdout + done.stderr
