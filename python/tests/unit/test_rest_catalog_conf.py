"""QREPL_CATALOG=rest (storage/spark.py rest_conf): the session's settings on an Iceberg REST
catalog, and the one-line refusals when its URI or token file is missing or the token file is
readable by others. No JVM."""

from __future__ import annotations

import pytest

from qrepl.storage import spark

ENV = ("QREPL_CATALOG", "QREPL_REST_URI", "QREPL_REST_WAREHOUSE", "QREPL_REST_PREFIX", "QREPL_REST_TOKEN_FILE")


@pytest.fixture
def rest_env(monkeypatch, tmp_path):
    for name in (*ENV, "QREPL_METASTORE"):
        monkeypatch.delenv(name, raising=False)
    token = tmp_path / "rest-token"
    token.write_text("s3cret-token\n")
    token.chmod(0o600)
    monkeypatch.setenv("QREPL_CATALOG", "rest")
    monkeypatch.setenv("QREPL_REST_URI", "http://127.0.0.1:8181/")
    monkeypatch.setenv("QREPL_REST_TOKEN_FILE", str(token))
    return token


def test_hive_stays_the_default(monkeypatch, tmp_path):
    for name in (*ENV, "QREPL_METASTORE"):
        monkeypatch.delenv(name, raising=False)
    conf = spark.spark_conf(tmp_path)
    assert conf["spark.sql.catalogImplementation"] == "hive"
    assert conf["spark.sql.catalog.spark_catalog.type"] == "hive"
    assert "spark.sql.defaultCatalog" not in conf


def test_rest_puts_both_catalogs_on_the_rest_server_over_an_in_memory_session_catalog(rest_env, monkeypatch, tmp_path):
    monkeypatch.setenv("QREPL_REST_WAREHOUSE", "s3://lake/wh")
    monkeypatch.setenv("QREPL_REST_PREFIX", "cat1")
    conf = spark.spark_conf(tmp_path)
    assert conf["spark.sql.catalogImplementation"] == "in-memory"
    assert conf["spark.sql.defaultCatalog"] == spark.REST_CATALOG_NAME
    assert conf["spark.sql.catalog.qrepl_rest"] == "org.apache.iceberg.spark.SparkCatalog"
    assert conf["spark.sql.catalog.spark_catalog"] == "org.apache.iceberg.spark.SparkSessionCatalog"
    for catalog in ("spark_catalog", "qrepl_rest"):
        prefix = f"spark.sql.catalog.{catalog}"
        assert conf[f"{prefix}.type"] == "rest"
        assert conf[f"{prefix}.uri"] == "http://127.0.0.1:8181"
        assert conf[f"{prefix}.warehouse"] == "s3://lake/wh"
        assert conf[f"{prefix}.prefix"] == "cat1"
        assert conf[f"{prefix}.token"] == "s3cret-token"
        assert spark.is_secret_setting(f"{prefix}.token", "s3cret-token")  # spark-defaults.conf only
    builder = [k for k, v in conf.items() if not spark.is_secret_setting(k, v)]
    assert not [k for k in builder if "s3cret-token" in conf[k]]


@pytest.mark.parametrize(
    ("unset", "message"),
    [
        ("QREPL_REST_URI", "QREPL_CATALOG=rest needs QREPL_REST_URI"),
        ("QREPL_REST_TOKEN_FILE", "QREPL_CATALOG=rest needs QREPL_REST_TOKEN_FILE"),
    ],
)
def test_a_missing_uri_or_token_file_is_one_clear_line(rest_env, monkeypatch, tmp_path, unset, message):
    monkeypatch.delenv(unset)
    with pytest.raises(RuntimeError, match=message):
        spark.spark_conf(tmp_path)


def test_a_token_file_others_can_read_or_that_is_missing_is_refused(rest_env, monkeypatch, tmp_path):
    rest_env.chmod(0o644)
    with pytest.raises(RuntimeError, match="readable by other users"):
        spark.spark_conf(tmp_path)
    monkeypatch.setenv("QREPL_REST_TOKEN_FILE", str(tmp_path / "nothing"))
    with pytest.raises(RuntimeError, match="does not exist"):
        spark.spark_conf(tmp_path)


def test_credentials_in_the_uri_a_hive_metastore_and_an_unknown_catalog_are_refused(rest_env, monkeypatch, tmp_path):
    monkeypatch.setenv("QREPL_REST_URI", "http://user:pw@127.0.0.1:8181")
    with pytest.raises(RuntimeError, match="must not carry credentials") as err:
        spark.spark_conf(tmp_path)
    assert "pw" not in str(err.value)
    monkeypatch.setenv("QREPL_REST_URI", "http://127.0.0.1:8181")
    monkeypatch.setenv("QREPL_METASTORE", "postgresql://u@h/db")
    with pytest.raises(RuntimeError, match="unset it when QREPL_CATALOG=rest"):
        spark.spark_conf(tmp_path)
    monkeypatch.delenv("QREPL_METASTORE")
    monkeypatch.setenv("QREPL_CATALOG", "glue")
    with pytest.raises(RuntimeError, match="QREPL_CATALOG must be one of hive, rest"):
        spark.spark_conf(tmp_path)
