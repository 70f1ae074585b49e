"""The one place Spark + Iceberg is configured (docs/spec.md §2, docs/stack.md).

The same settings serve the embedded session (Python layer and dbt `local` target, one JVM),
and the Thrift server (`make thrift-start`, scripts/thrift.sh), through `spark-defaults.conf` written into the
state directory's conf/ folder (SPARK_CONF_DIR).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parents[2]
_PACKAGED_PROJECT = Path(__file__).resolve().parent / "dbt_project"  # packed by setup.py


def _project_dir() -> Path:
    """The dbt project: $QREPL_PROJECT_DIR, else the checkout this module runs from (editable
    install, `make`), else the copy packed into an installed wheel."""
    if os.environ.get("QREPL_PROJECT_DIR"):
        return Path(os.environ["QREPL_PROJECT_DIR"]).resolve()
    if (_CHECKOUT / "dbt_project.yml").is_file():
        return _CHECKOUT
    return _PACKAGED_PROJECT


PROJECT_DIR = _project_dir()
# Where qrepl writes (Spark state, dbt's target/ and logs/, the demo's viewer): beside a
# checkout as always; for an installed package, the directory qrepl runs in, never site-packages.
WORK_DIR = Path.cwd().resolve() if PROJECT_DIR == _PACKAGED_PROJECT else PROJECT_DIR
ICEBERG_JAR_NAME = "iceberg-spark-runtime-3.5_2.12-1.9.2.jar"

LOG4J2 = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
""" + "".join(
    f"logger.q{i}.name = {name}\nlogger.q{i}.level = error\n"
    for i, name in enumerate([
        "org.apache.hadoop.hive.metastore.ObjectStore", "org.apache.hadoop.hive.conf.HiveConf",
        "org.apache.spark.sql.SparkSession", "org.apache.hadoop.util.NativeCodeLoader",
        "DataNucleus", "org.datanucleus", "org.apache.hadoop.hive.metastore.RetryingHMSHandler",
        "org.apache.spark.sql.hive.HiveUtils", "org.apache.hadoop.hive.metastore.HiveMetaStore",
        "org.apache.spark.sql.hive.client", "org.apache.iceberg.hive.MetastoreLock",
        "org.apache.spark.sql.execution.datasources.v2", "org.apache.spark.util.Utils",
        "org.apache.hadoop.hive.ql.session.SessionState", "org.apache.spark.sql.internal.SharedState",
        "org.apache.iceberg.spark.source", "org.apache.spark.sql.catalyst.analysis",
        "org.apache.spark.sql.execution.CacheManager", "org.apache.iceberg.BaseMetastoreCatalog",
        "org.apache.spark.sql.hive.thriftserver", "org.apache.hive.service",
        "org.apache.spark.scheduler.TaskSetManager", "org.apache.spark.storage.BlockManager",
    ])
)


def state_dir() -> Path:
    """Warehouse, metastore and Spark conf live here; QREPL_STATE_DIR moves them."""
    return Path(os.environ.get("QREPL_STATE_DIR", WORK_DIR / ".qrepl_state")).resolve()


def iceberg_jar() -> Path:
    import snowpark_connect_deps_iceberg as deps

    jar = Path(deps.__file__).parent / "jars" / ICEBERG_JAR_NAME
    if not jar.exists():
        raise RuntimeError(f"Iceberg runtime jar missing: {jar} (reinstall snowpark-connect-deps-iceberg==1.0.1)")
    return jar


def spark_conf(state: Path | None = None) -> dict[str, str]:
    state = state or state_dir()
    return {
        "spark.master": os.environ.get("QREPL_SPARK_MASTER", "local[2]"),
        "spark.app.name": "qrepl",
        "spark.driver.memory": os.environ.get("QREPL_DRIVER_MEMORY", "4g"),
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2",
        "spark.sql.adaptive.enabled": "true",
        "spark.sql.warehouse.dir": str(state / "warehouse"),
        "spark.sql.catalogImplementation": "hive",
        "spark.hadoop.javax.jdo.option.ConnectionURL":
            f"jdbc:derby:;databaseName={state / 'metastore_db'};create=true",
        "spark.hadoop.datanucleus.schema.autoCreateAll": "true",
        "spark.hadoop.hive.metastore.schema.verification": "false",
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={state} -Dderby.stream.error.file={state / 'derby.log'}",
        "spark.jars": str(iceberg_jar()),
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.sql.catalog.spark_catalog": "org.apache.iceberg.spark.SparkSessionCatalog",
        "spark.sql.catalog.spark_catalog.type": "hive",
        "spark.sql.catalog.spark_catalog.cache-enabled": "false",
        "spark.sql.sources.partitionOverwriteMode": "dynamic",
        "spark.sql.session.timeZone": "UTC",
        # dbt-spark's incremental models insert from SQL temporary views (`<model>__dbt_tmp`);
        # keeping each view's analyzed plan spares re-resolving (and reloading) every Iceberg
        # table underneath when the view is read
        "spark.sql.legacy.storeAnalyzedPlanForView": "true",
    }


def write_spark_conf_dir(state: Path | None = None) -> Path:
    """Write spark-defaults.conf and log4j2.properties; return the folder (SPARK_CONF_DIR)."""
    state = state or state_dir()
    conf_dir = state / "conf"
    conf_dir.mkdir(parents=True, exist_ok=True)
    lines = [f"{k} {v}" for k, v in spark_conf(state).items()]
    (conf_dir / "spark-defaults.conf").write_text("\n".join(lines) + "\n")
    (conf_dir / "log4j2.properties").write_text(LOG4J2)
    return conf_dir


def prepare_environment(state: Path | None = None) -> Path:
    state = state or state_dir()
    state.mkdir(parents=True, exist_ok=True)
    os.environ["TZ"] = "UTC"  # Python's datetimes from Spark use the process zone; keep both UTC
    import time

    time.tzset()
    conf_dir = write_spark_conf_dir(state)
    os.environ["SPARK_CONF_DIR"] = str(conf_dir)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    return state


_SESSION = None


def get_spark():
    """The process's one SparkSession (Derby allows one JVM: dbt reuses this session)."""
    global _SESSION
    if _SESSION is not None:
        return _SESSION
    import shutil

    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        raise RuntimeError("java not found: qrepl needs Java 17 (apt-get install openjdk-17-jre-headless)")
    state = prepare_environment()
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    for k, v in spark_conf(state).items():
        builder = builder.config(k, v)
    spark = builder.enableHiveSupport().getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    _ensure_hive_lock_tables(spark, state)
    from .faults import install_from_env

    install_from_env()  # the crash tests' fault points; nothing happens unless QREPL_FAULT is set
    _SESSION = spark
    return spark


def _ensure_hive_lock_tables(spark, state: Path) -> None:
    """Iceberg's Hive locks stay ON; they need HMS transaction tables, created once per metastore."""
    marker = state / ".hive_txn_tables"
    if marker.exists():
        return
    spark.sql("show databases").collect()  # boots the metastore so Derby has its schema
    jvm = spark._jvm
    hive_conf = jvm.org.apache.hadoop.hive.conf.HiveConf()
    for k, v in spark_conf(state).items():
        if k.startswith("spark.hadoop."):
            hive_conf.set(k[len("spark.hadoop."):], v)
    try:
        jvm.org.apache.hadoop.hive.metastore.txn.TxnDbUtil.prepDb(hive_conf)
    except Exception as exc:  # not idempotent: a second call reports existing tables
        if "already exists" not in str(exc).lower():
            raise
    marker.write_text("created\n")


def stop_spark() -> None:
    global _SESSION
    if _SESSION is not None:
        _SESSION.stop()
        _SESSION = None
