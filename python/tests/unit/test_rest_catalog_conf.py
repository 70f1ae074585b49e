"""QREPL_CATALOG=rest (storage/spark.py rest_conf): the session's settings on an Iceberg REST
catalog, and the one-line refusals when its URI or token file is missing or the token file is
readable by others; QREPL_REST_PROPERTIES_FILE's lines on both catalogs, each a secret, and the
refusals of its malformed, reserved or doubled keys (naming no value). No JVM."""

from __future__ import annotations

import re

import pytest

from qrepl.storage import spark

ENV = spark.REST_ENV


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


def properties_file(tmp_path, text: str, mode: int = 0o600):
    path = tmp_path / "rest.properties"
    path.write_text(text)
    path.chmod(mode)
    return path


def test_the_properties_file_sets_each_key_on_both_catalogs_as_a_secret(rest_env, monkeypatch, tmp_path):
    text = (
        "# OAuth2 client credentials\n\ncredential = id:s3cret=x\nscope=PRINCIPAL_ROLE:ALL\n"
        "header.X-Iceberg-Access-Delegation=vended-credentials\nio-impl=org.apache.iceberg.io.ResolvingFileIO\n"
    )
    monkeypatch.setenv("QREPL_REST_PROPERTIES_FILE", str(properties_file(tmp_path, text)))
    monkeypatch.delenv("QREPL_REST_TOKEN_FILE")  # optional with `credential`
    conf = spark.spark_conf(tmp_path)
    for catalog in ("spark_catalog", "qrepl_rest"):
        prefix = f"spark.sql.catalog.{catalog}"
        assert conf[f"{prefix}.credential"] == "id:s3cret=x"  # split at the first `=`
        assert conf[f"{prefix}.scope"] == "PRINCIPAL_ROLE:ALL"
        assert conf[f"{prefix}.header.X-Iceberg-Access-Delegation"] == "vended-credentials"
        assert conf[f"{prefix}.io-impl"] == "org.apache.iceberg.io.ResolvingFileIO"
        assert f"{prefix}.token" not in conf
    # every value from the file reaches the JVM through spark-defaults.conf only, never argv
    on_argv = {k: v for k, v in conf.items() if not spark.is_secret_setting(k, v)}
    assert not [k for k in on_argv if k.endswith((".credential", ".scope", ".io-impl")) or ".header." in k]
    assert "spark.sql.catalog.qrepl_rest.uri" in on_argv and "spark.sql.catalog.spark_catalog.type" in on_argv
    spark.write_spark_conf_dir(tmp_path)
    written = (tmp_path / "conf" / "spark-defaults.conf").read_text()
    assert "spark.sql.catalog.qrepl_rest.credential id:s3cret=x" in written
    assert (tmp_path / "conf" / "spark-defaults.conf").stat().st_mode & 0o077 == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("credential\n", "line 1: not a `key=value` line"),
        ("# c\ncredential=\n", "line 2: not a `key=value` line"),
        ("=s3cret\n", "line 1: not a `key=value` line"),
        ("cred ential=s3cret\n", "line 1: a key is letters, digits and . _ - only"),
        ("header.X:Y=s3cret\n", "line 1: a key is letters, digits and . _ - only"),
        ("uri=http://s3cret\n", "line 1: `uri` is set by QREPL_REST_URI, not by this file"),
        ("type=s3cret\n", "line 1: `type` is set by qrepl"),
        ("catalog-impl=s3cret\n", "line 1: `catalog-impl` is set by qrepl"),
        ("warehouse=s3cret\n", "`warehouse` is set by QREPL_REST_WAREHOUSE"),
        ("scope=a\nscope=s3cret\n", "line 2: `scope` is set twice"),
        ("token=s3cret\n", "QREPL_REST_TOKEN_FILE and QREPL_REST_PROPERTIES_FILE's `token` both set the token"),
    ],
)
def test_a_bad_properties_line_is_one_line_naming_no_value(rest_env, monkeypatch, tmp_path, text, message):
    monkeypatch.setenv("QREPL_REST_PROPERTIES_FILE", str(properties_file(tmp_path, text)))
    with pytest.raises(RuntimeError, match=re.escape(message)) as err:
        spark.spark_conf(tmp_path)
    assert "s3cret" not in str(err.value) and "\n" not in str(err.value)


def test_the_properties_file_must_be_owner_only_and_authenticate_without_a_token_file(rest_env, monkeypatch, tmp_path):
    path = properties_file(tmp_path, "credential=id:s3cret\n", mode=0o640)
    monkeypatch.setenv("QREPL_REST_PROPERTIES_FILE", str(path))
    with pytest.raises(RuntimeError, match="readable by other users"):
        spark.spark_conf(tmp_path)
    monkeypatch.delenv("QREPL_REST_TOKEN_FILE")
    properties_file(tmp_path, "header.X-Iceberg-Access-Delegation=vended-credentials\n")
    with pytest.raises(
        RuntimeError,
        match="or QREPL_REST_PROPERTIES_FILE setting credential, token, rest.auth.type or rest.sigv4-enabled",
    ):
        spark.spark_conf(tmp_path)
    properties_file(tmp_path, "token=s3cret\n")  # the token from this file instead
    assert spark.spark_conf(tmp_path)["spark.sql.catalog.qrepl_rest.token"] == "s3cret"
    monkeypatch.setenv("QREPL_REST_PROPERTIES_FILE", str(tmp_path / "nothing"))
    with pytest.raises(RuntimeError, match="QREPL_REST_PROPERTIES_FILE .* does not exist"):
        spark.spark_conf(tmp_path)
