"""The one setting that points every qrepl JVM at a shared PostgreSQL metastore (docs/deploying.md)."""

from pathlib import Path

import pytest

from qrepl.storage import spark


def conf_with(monkeypatch, tmp_path: Path, **env: str) -> dict[str, str]:
    for name in ("QREPL_METASTORE", "QREPL_WAREHOUSE", "QREPL_METASTORE_JDBC_JAR", "QREPL_SPARK_SECRET_FILE"):
        monkeypatch.delenv(name, raising=False)
    jar = tmp_path / "postgresql.jar"
    jar.write_bytes(b"")
    monkeypatch.setenv("QREPL_METASTORE_JDBC_JAR", str(jar))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return spark.spark_conf(tmp_path / "state")


def test_default_is_the_embedded_derby_metastore_in_the_state_dir(monkeypatch, tmp_path):
    conf = conf_with(monkeypatch, tmp_path)
    # the database's name is relative to derby.system.home, the state dir
    assert conf["spark.hadoop.javax.jdo.option.ConnectionURL"] == "jdbc:derby:;databaseName=metastore_db;create=true"
    assert f"-Dderby.system.home={tmp_path / 'state'} " in conf["spark.driver.extraJavaOptions"]
    assert conf["spark.sql.warehouse.dir"] == str(tmp_path / "state" / "warehouse")
    assert "spark.driver.extraClassPath" not in conf


def test_postgresql_url_becomes_jdbc_settings_and_driver_class_path(monkeypatch, tmp_path):
    conf = conf_with(
        monkeypatch,
        tmp_path,
        QREPL_METASTORE="postgresql://meta:p%40ss@127.0.0.1:5433/qrepl_metastore",
        QREPL_WAREHOUSE=str(tmp_path / "shared"),
    )
    assert conf["spark.hadoop.javax.jdo.option.ConnectionURL"] == "jdbc:postgresql://127.0.0.1:5433/qrepl_metastore"
    assert conf["spark.hadoop.javax.jdo.option.ConnectionDriverName"] == "org.postgresql.Driver"
    assert conf["spark.hadoop.javax.jdo.option.ConnectionUserName"] == "meta"
    assert conf["spark.hadoop.javax.jdo.option.ConnectionPassword"] == "p@ss"
    assert conf["spark.driver.extraClassPath"] == str(tmp_path / "postgresql.jar")
    assert conf["spark.sql.warehouse.dir"] == str(tmp_path / "shared")
    # no foreign keys: a table created lazily never waits on a referenced table (see spark.py)
    assert conf["spark.hadoop.datanucleus.schema.autoCreateConstraints"] == "false"
    assert conf["spark.hadoop.datanucleus.schema.autoCreateAll"] == "false"


def test_jdbc_url_is_used_as_given(monkeypatch, tmp_path):
    url = "jdbc:postgresql://db.internal:5432/hms?user=hms&password=x"
    conf = conf_with(monkeypatch, tmp_path, QREPL_METASTORE=url)
    assert conf["spark.hadoop.javax.jdo.option.ConnectionURL"] == url
    assert "spark.hadoop.javax.jdo.option.ConnectionUserName" not in conf


def test_other_urls_fail_in_one_line_without_echoing_the_password(monkeypatch, tmp_path):
    with pytest.raises(RuntimeError) as failure:
        conf_with(monkeypatch, tmp_path, QREPL_METASTORE="mysql://u:secret@host/db")
    assert "QREPL_METASTORE must look like postgresql://" in str(failure.value)
    assert "secret" not in str(failure.value)
    assert "\n" not in str(failure.value)


def test_missing_jdbc_driver_names_the_make_target(monkeypatch, tmp_path):
    conf_with(monkeypatch, tmp_path)
    monkeypatch.setenv("QREPL_METASTORE_JDBC_JAR", str(tmp_path / "absent.jar"))
    monkeypatch.setenv("QREPL_METASTORE", "postgresql://u@127.0.0.1/db")
    with pytest.raises(RuntimeError, match="make metastore-driver"):
        spark.spark_conf(tmp_path / "state")


def test_secret_files_are_owner_only_from_creation_and_never_reused(tmp_path):
    path = tmp_path / "secrets" / "s"
    value = spark.ensure_secret(path)
    assert len(value) >= 32 and path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert spark.ensure_secret(path) == value  # created once
    path.chmod(0o644)
    with pytest.raises(RuntimeError, match="readable by other users"):
        spark.read_secret(path)
    (tmp_path / "x").write_text("old")
    with pytest.raises(FileExistsError):  # O_EXCL: never writes into an existing file or link
        spark.write_private_file(tmp_path / "x", "new")


def test_secrets_stay_off_the_builder_and_the_cluster_secret_comes_from_its_file(monkeypatch, tmp_path):
    secret = tmp_path / "spark-secret"
    spark.write_private_file(secret, "s3cr3t\n")
    conf = conf_with(
        monkeypatch,
        tmp_path,
        QREPL_METASTORE="postgresql://meta:pw@127.0.0.1:5433/qrepl_metastore",
        QREPL_SPARK_SECRET_FILE=str(secret),
    )
    assert conf["spark.authenticate"] == "true" and conf["spark.authenticate.secret"] == "s3cr3t"
    assert conf["spark.hadoop.fs.permissions.umask-mode"] == "077"
    on_argv = {k for k, v in conf.items() if not spark.is_secret_setting(k, v)}
    assert "spark.authenticate.secret" not in on_argv
    assert "spark.hadoop.javax.jdo.option.ConnectionPassword" not in on_argv
    assert not spark.is_secret_setting(
        "spark.hadoop.javax.jdo.option.ConnectionURL", conf["spark.hadoop.javax.jdo.option.ConnectionURL"]
    )
    assert spark.is_secret_setting(
        "spark.hadoop.javax.jdo.option.ConnectionURL", "jdbc:postgresql://h/db?user=u&password=x"
    )


def test_spark_defaults_conf_is_owner_only(monkeypatch, tmp_path):
    conf_with(monkeypatch, tmp_path)
    conf_dir = spark.write_spark_conf_dir(tmp_path / "state")
    assert (conf_dir / "spark-defaults.conf").stat().st_mode & 0o777 == 0o600
    assert conf_dir.stat().st_mode & 0o777 == 0o700


def test_a_shared_sticky_directory_is_never_closed(tmp_path):
    """A secret or a state dir placed straight in /tmp by a process that owns /tmp (root) must
    not close /tmp to every other user of the host; a directory of qrepl's own is closed."""
    shared = tmp_path / "tmp_like"
    shared.mkdir()
    shared.chmod(0o1777)
    spark.ensure_secret(shared / "secret")
    assert shared.stat().st_mode & 0o7777 == 0o1777
    own = tmp_path / "own"
    own.mkdir()
    own.chmod(0o755)
    spark.make_private_dir(own)
    assert own.stat().st_mode & 0o777 == 0o700
