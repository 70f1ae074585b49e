"""Plain dbt on the `local` target (profiles.yml) builds its Spark session from the profile's
server_side_parameters, qrepl's own processes from spark.py's spark_conf: the two must be the
same settings, key for key, or plain `dbt build` and `qrepl run` would run on different
sessions. Also the downstream example's profile (examples/downstream), which copies them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from qrepl.storage import spark

ROOT = Path(__file__).resolve().parents[3]
PROFILES = {
    "checkout": (ROOT / "profiles.yml", ROOT / ".qrepl_state"),
    "downstream example": (ROOT / "examples" / "downstream" / "profiles.yml", ROOT / ".qrepl_state"),
}
QREPL_ENV = (
    "QREPL_METASTORE",
    "QREPL_WAREHOUSE",
    "QREPL_SPARK_SECRET_FILE",
    "QREPL_SPARK_MASTER",
    "QREPL_DRIVER_MEMORY",
    "QREPL_STATE_DIR",
    *spark.REST_ENV,
)


def local_session_settings(profiles: Path, env: dict[str, str]) -> dict[str, str]:
    """The `local` output's server_side_parameters as dbt renders them under `env`."""
    from dbt.config.renderer import ProfileRenderer
    from dbt_common.context import set_invocation_context

    set_invocation_context(env)
    (profile,) = yaml.safe_load(profiles.read_text()).values()
    rendered = ProfileRenderer({}).render_data(profile)
    return rendered["outputs"]["local"]["server_side_parameters"]


def session_settings(monkeypatch, state: Path, **env: str) -> dict[str, str]:
    """spark_conf's settings that reach a session builder (no secrets) under `env`."""
    for name in QREPL_ENV:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return {k: v for k, v in spark.spark_conf(state).items() if not spark.is_secret_setting(k, v)}


@pytest.mark.parametrize("which", sorted(PROFILES))
def test_the_profile_sets_the_session_spark_conf_sets(monkeypatch, tmp_path, which):
    profiles, _ = PROFILES[which]
    state = tmp_path / "state"
    env = {"QREPL_STATE_DIR": str(state), "QREPL_SPARK_MASTER": "local[1]", "QREPL_DRIVER_MEMORY": "1g"}
    expected = session_settings(monkeypatch, state, **env)
    actual = local_session_settings(profiles, {**{k: v for k, v in os.environ.items() if k not in QREPL_ENV}, **env})
    assert actual == expected


@pytest.mark.parametrize("which", sorted(PROFILES))
def test_on_a_rest_catalog_the_profile_sets_what_spark_conf_sets_but_the_catalogs_own(monkeypatch, tmp_path, which):
    """QREPL_CATALOG=rest: the profile's keys are spark_conf's, with its values (in-memory
    session catalog, spark_catalog of type rest); the REST catalog's own settings (URI,
    warehouse, prefix, token, the default catalog) come from SPARK_CONF_DIR only: a profile
    cannot hold keys for one catalog alone, nor a secret (builder settings reach argv)."""
    profiles, _ = PROFILES[which]
    state = tmp_path / "state"
    token = tmp_path / "token"
    token.write_text("t0ken\n")
    token.chmod(0o600)
    env = {
        "QREPL_STATE_DIR": str(state),
        "QREPL_CATALOG": "rest",
        "QREPL_REST_URI": "http://127.0.0.1:8181",
        "QREPL_REST_WAREHOUSE": "/srv/warehouse",
        "QREPL_REST_PREFIX": "cat1",
        "QREPL_REST_TOKEN_FILE": str(token),
    }
    on_hive = session_settings(monkeypatch, state, QREPL_STATE_DIR=str(state))
    full = session_settings(monkeypatch, state, **env)
    expected = {k: v for k, v in full.items() if k in on_hive}  # the same keys as on Hive
    assert {"spark.sql.defaultCatalog", "spark.sql.catalog.qrepl_rest.uri"} <= set(full) - set(expected)
    actual = local_session_settings(profiles, {**{k: v for k, v in os.environ.items() if k not in QREPL_ENV}, **env})
    assert actual == expected
    assert actual["spark.sql.catalogImplementation"] == "in-memory"
    assert actual["spark.sql.catalog.spark_catalog.type"] == "rest"
    assert "t0ken" not in str(actual) and "t0ken" not in str(full)  # the token reaches no builder
    assert spark.spark_conf(state)["spark.sql.catalog.qrepl_rest.token"] == "t0ken"


@pytest.mark.parametrize("which", sorted(PROFILES))
def test_without_qrepl_state_dir_the_profile_uses_the_checkouts_state_dir(monkeypatch, which):
    """The profile's default state dir is relative to the project dbt runs in; resolved there,
    it is the one every qrepl command of the checkout uses by default."""
    profiles, state = PROFILES[which]
    expected = session_settings(monkeypatch, state)
    env = {k: v for k, v in os.environ.items() if k not in QREPL_ENV}
    actual = local_session_settings(profiles, env)
    relative = os.path.relpath(state, profiles.parent)
    resolved = {k: v.replace(relative, str(state)) for k, v in actual.items()}
    assert resolved == expected
    # the relative paths dbt's JVM resolves against the directory it runs in
    assert actual["spark.sql.warehouse.dir"] == f"{relative}/warehouse"


def test_the_state_dirs_conf_holds_what_the_profile_points_at(monkeypatch, tmp_path):
    session_settings(monkeypatch, tmp_path / "state")
    conf_dir = spark.write_spark_conf_dir(tmp_path / "state")
    settings = spark.spark_conf(tmp_path / "state")
    assert Path(settings["spark.jars"]).resolve() == spark.iceberg_jar().resolve()
    assert f"-Dlog4j2.configurationFile={conf_dir / 'log4j2.properties'}" in settings["spark.driver.extraJavaOptions"]
    assert (conf_dir / "log4j2.properties").read_text() == spark.LOG4J2
    spark.write_spark_conf_dir(tmp_path / "state")  # a second write keeps the link
    assert Path(settings["spark.jars"]).resolve() == spark.iceberg_jar().resolve()


def test_dbt_inside_a_qrepl_process_has_the_same_output_without_the_settings():
    """`qrepl run` / `qrepl dbt` run dbt on the session spark.py built: the `in_process` output
    is `local` without server_side_parameters (applying them again costs at every statement)."""
    (profile,) = yaml.safe_load((ROOT / "profiles.yml").read_text()).values()
    local, in_process = dict(profile["outputs"]["local"]), profile["outputs"]["in_process"]
    assert local.pop("server_side_parameters")
    assert in_process == local
