# over 400 lines: every Spark + Iceberg setting in one place (see the docstring), for the session, dbt and Thrift
"""The one place Spark + Iceberg is configured (docs/spec.md §2, docs/stack.md, docs/deploying.md).

The same settings serve the embedded session (Python layer and dbt `local` target), and the
Thrift server (`scripts/thrift.sh`), through `spark-defaults.conf` written into the state
directory's conf/ folder (SPARK_CONF_DIR).

Two metastores:

* default: an embedded Derby metastore in the state directory. Zero setup; one JVM at a time.
* `QREPL_METASTORE=postgresql://user:password@host:port/database` (or a `jdbc:postgresql://`
  URL): a Hive metastore on PostgreSQL shared by every qrepl JVM (the Thrift server, each
  Python process's session). `QREPL_WAREHOUSE` then names the warehouse directory they share.

Or no metastore: `QREPL_CATALOG=rest` puts the session on an Iceberg REST catalog
(QREPL_REST_URI, QREPL_REST_WAREHOUSE, QREPL_REST_PREFIX, the bearer token in the owner-only
QREPL_REST_TOKEN_FILE, any other catalog property in the owner-only QREPL_REST_PROPERTIES_FILE):
the default catalog `qrepl_rest` and `spark_catalog` both on it, over an in-memory session
catalog (rest_conf).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

_PACKAGE = Path(__file__).resolve().parents[1]  # python/qrepl, or site-packages/qrepl
_CHECKOUT = _PACKAGE.parents[1]
_PACKAGED_PROJECT = _PACKAGE / "dbt_project"  # packed by setup.py


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
ICEBERG_JAR_LINK = "iceberg-spark-runtime.jar"  # in the state dir's conf/ (spark_conf, profiles.yml)
POSTGRESQL_JDBC_JAR = "/usr/share/java/postgresql.jar"  # Debian's libpostgresql-jdbc-java
LOCK_TABLES_SQL = Path(__file__).with_name("hive_lock_tables.postgresql.sql")

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
    for i, name in enumerate(
        [
            "org.apache.hadoop.hive.metastore.ObjectStore",
            "org.apache.hadoop.hive.conf.HiveConf",
            "org.apache.spark.sql.SparkSession",
            "org.apache.hadoop.util.NativeCodeLoader",
            "DataNucleus",
            "org.datanucleus",
            "org.apache.hadoop.hive.metastore.RetryingHMSHandler",
            "org.apache.spark.sql.hive.HiveUtils",
            "org.apache.hadoop.hive.metastore.HiveMetaStore",
            "org.apache.spark.sql.hive.client",
            "org.apache.iceberg.hive.MetastoreLock",
            "org.apache.spark.sql.execution.datasources.v2",
            "org.apache.spark.util.Utils",
            "org.apache.hadoop.hive.ql.session.SessionState",
            "org.apache.spark.sql.internal.SharedState",
            "org.apache.iceberg.spark.source",
            "org.apache.spark.sql.catalyst.analysis",
            "org.apache.spark.sql.execution.CacheManager",
            "org.apache.iceberg.BaseMetastoreCatalog",
            "org.apache.spark.sql.hive.thriftserver",
            "org.apache.hive.service",
            "org.apache.spark.scheduler.TaskSetManager",
            "org.apache.spark.storage.BlockManager",
            # "Fair Scheduler configuration file not found": pools take their defaults, as meant
            "org.apache.spark.scheduler.FairSchedulableBuilder",
            # what qrepl's own processes silence with setLogLevel("ERROR") once the session is up,
            # and plain dbt (profiles.yml) would print at every model
            "org.apache.spark.sql.execution.window.WindowExec",
            "org.apache.spark.sql.catalyst.util.SparkStringUtils",
        ]
    )
)


def state_dir() -> Path:
    """Warehouse, metastore and Spark conf live here; QREPL_STATE_DIR moves them."""
    return Path(os.environ.get("QREPL_STATE_DIR", WORK_DIR / ".qrepl_state")).resolve()


# Settings whose values are secrets (or may carry one: a jdbc: URL with ?password=). They reach a
# JVM only through the owner-only spark-defaults.conf in SPARK_CONF_DIR, never through
# SparkSession.builder: PySpark turns every builder setting into a `--conf k=v` on the
# spark-submit command line, which `ps` shows to every user (docs/security.md).
# a metastore table lock not heartbeaten for this long is abandoned (remove_abandoned_locks)
METASTORE_LOCK_TIMEOUT_SECONDS = 60
SECRET_KEYS = frozenset(
    {
        "spark.hadoop.javax.jdo.option.ConnectionPassword",
        "spark.authenticate.secret",
        "spark.sql.catalog.spark_catalog.token",
        "spark.sql.catalog.qrepl_rest.token",  # REST_CATALOG_NAME (rest_conf)
    }
)


def is_secret_setting(key: str, value: str) -> bool:
    return key in SECRET_KEYS or _is_rest_property(key) or "password" in value.lower() or "secret" in value.lower()


def _is_rest_property(key: str) -> bool:
    """A catalog property of qrepl's two Iceberg catalogs that qrepl does not set in the open
    (REST_PUBLIC_KEYS): the token and every line of QREPL_REST_PROPERTIES_FILE are secret."""
    for catalog in ("spark_catalog", REST_CATALOG_NAME):
        prefix = f"spark.sql.catalog.{catalog}."
        if key.startswith(prefix):
            return key[len(prefix) :] not in REST_PUBLIC_KEYS
    return False


def private_umask() -> None:
    """Files and directories this process (and the JVM it starts) creates: owner-only."""
    os.umask(0o077)


def make_private_dir(path: Path) -> Path:
    """mkdir -p with mode 0700; an existing directory of ours is closed to other users too."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = path.stat()
    # a shared sticky directory (/tmp, /var/tmp) is never closed, even when this process owns
    # it (root): every other user of the host needs it; files in it are owner-only anyway
    if st.st_uid == os.getuid() and st.st_mode & 0o077 and not st.st_mode & stat.S_ISVTX:
        path.chmod(0o700)  # a directory, not a secret file: closing it later hides what is inside
    return path


def write_private_file(path: Path, text: str) -> None:
    """Create `path` owner-only from its first byte (O_EXCL: never an existing file or link)."""
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)


def ensure_secret(path: Path) -> str:
    """A generated secret in an owner-only file, created once; returns it."""
    import secrets

    make_private_dir(path.parent)
    try:
        write_private_file(path, secrets.token_urlsafe(32) + "\n")
    except FileExistsError:
        pass
    return read_secret(path)


def read_secret(path: Path) -> str:
    mode = path.stat().st_mode
    if mode & 0o077:
        raise RuntimeError(
            f"{path} is readable by other users (mode {oct(mode & 0o777)}): "
            "a secret file must be owner-only (chmod 600, and rotate the secret)"
        )
    value = path.read_text().strip()
    if not value:
        raise RuntimeError(f"{path} is empty")
    return value


def spark_secret() -> str | None:
    """The cluster's shared secret (spark.authenticate), from the owner-only file
    QREPL_SPARK_SECRET_FILE; None without it (a local session then generates its own)."""
    path = os.environ.get("QREPL_SPARK_SECRET_FILE", "").strip()
    return read_secret(Path(path)) if path else None


def iceberg_jar() -> Path:
    import snowpark_connect_deps_iceberg as deps

    jar = Path(deps.__file__).parent / "jars" / ICEBERG_JAR_NAME
    if not jar.exists():
        raise RuntimeError(f"Iceberg runtime jar missing: {jar} (reinstall snowpark-connect-deps-iceberg==1.0.1)")
    return jar


def warehouse_dir(state: Path) -> str:
    """The Iceberg warehouse: QREPL_WAREHOUSE (shared by every JVM of a deployment), else the state dir's."""
    shared = os.environ.get("QREPL_WAREHOUSE", "").strip()
    if not shared:
        return str(state / "warehouse")
    if "://" in shared or shared.startswith("file:"):
        return shared
    return str(Path(shared).resolve())


def postgresql_jdbc_jar() -> Path:
    jar = Path(os.environ.get("QREPL_METASTORE_JDBC_JAR", POSTGRESQL_JDBC_JAR))
    if not jar.exists():
        raise RuntimeError(
            f"PostgreSQL JDBC driver missing: {jar} (run `make metastore-driver`, "
            "i.e. apt-get install libpostgresql-jdbc-java, or set QREPL_METASTORE_JDBC_JAR)"
        )
    return jar


CATALOGS = ("hive", "rest")
# On a REST catalog the session's default catalog: Iceberg's SparkCatalog over the REST catalog,
# so that unqualified names (every model, macro and Python statement: `schema.table`) resolve in
# it as a v2 catalog. A name no schema of qrepl's may take: `<schema>.<table>` would then name
# a table of this catalog.
REST_CATALOG_NAME = "qrepl_rest"
# the environment that puts qrepl on a REST catalog (catalog_kind, rest_conf)
REST_ENV = (
    "QREPL_CATALOG",
    "QREPL_REST_URI",
    "QREPL_REST_WAREHOUSE",
    "QREPL_REST_PREFIX",
    "QREPL_REST_TOKEN_FILE",
    "QREPL_REST_PROPERTIES_FILE",
)
# The catalog properties qrepl sets itself, in the open (spark-submit's argv): QREPL_REST_PROPERTIES_FILE
# may not set them. Every other property of the two catalogs is secret (is_secret_setting).
REST_PUBLIC_KEYS = {
    "type": "qrepl (rest)",
    "catalog-impl": "qrepl (type=rest)",
    "uri": "QREPL_REST_URI",
    "warehouse": "QREPL_REST_WAREHOUSE",
    "prefix": "QREPL_REST_PREFIX",
    "cache-enabled": "qrepl (false: every read sees other writers' commits)",
    "default-namespace": "qrepl (default)",
}
REST_PROPERTY_KEY = re.compile(r"[A-Za-z0-9._-]+")
# the properties that authenticate without QREPL_REST_TOKEN_FILE (Iceberg's RESTCatalog):
# OAuth2 client credentials, a token, an AuthManager (`rest.auth.type`, `none` included), SigV4
REST_AUTH_KEYS = ("credential", "token", "rest.auth.type", "rest.sigv4-enabled")


def rest_properties() -> dict[str, str]:
    """QREPL_REST_PROPERTIES_FILE: an owner-only file of `key=value` lines (blank lines and
    `#` comments skipped), each a catalog property of both qrepl catalogs
    (`spark.sql.catalog.<catalog>.<key>`): OAuth2 (`credential`, `oauth2-server-uri`, `scope`),
    `header.*`, `io-impl`, SigV4 (`rest.sigv4-enabled`, `rest.signing-name`), ... Every value
    counts as secret: refusals name the line and the key, never a value."""
    name = os.environ.get("QREPL_REST_PROPERTIES_FILE", "").strip()
    if not name:
        return {}
    path = Path(name).expanduser()
    if not path.is_file():
        raise RuntimeError(f"QREPL_REST_PROPERTIES_FILE {path} does not exist")
    properties: dict[str, str] = {}
    for number, line in enumerate(read_secret(path).splitlines(), 1):  # refuses a file others can read
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        where = f"QREPL_REST_PROPERTIES_FILE {path} line {number}"
        key, eq, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key or not value:
            raise RuntimeError(f"{where}: not a `key=value` line with a key and a value")
        if not REST_PROPERTY_KEY.fullmatch(key):
            raise RuntimeError(f"{where}: a key is letters, digits and . _ - only")
        if key in REST_PUBLIC_KEYS:
            raise RuntimeError(f"{where}: `{key}` is set by {REST_PUBLIC_KEYS[key]}, not by this file")
        if key in properties:
            raise RuntimeError(f"{where}: `{key}` is set twice")
        properties[key] = value
    return properties


def catalog_kind() -> str:
    """QREPL_CATALOG: `hive` (the default: a Hive metastore) or `rest` (an Iceberg REST catalog)."""
    kind = os.environ.get("QREPL_CATALOG", "").strip().lower() or "hive"
    if kind not in CATALOGS:
        raise RuntimeError(f"QREPL_CATALOG must be one of {', '.join(CATALOGS)}, got {kind!r}")
    if kind == "rest" and metastore_url() is not None:
        raise RuntimeError("QREPL_METASTORE names a Hive metastore: unset it when QREPL_CATALOG=rest")
    return kind


def on_rest_catalog() -> bool:
    return catalog_kind() == "rest"


def rest_conf() -> dict[str, str]:
    """The session on an Iceberg REST catalog (QREPL_CATALOG=rest), two Spark catalogs over it:

    * the default catalog `qrepl_rest`, Iceberg's SparkCatalog (type=rest): unqualified names
      resolve here, as a v2 catalog. `spark_catalog` cannot be that default: Spark answers
      `show tables` / `show table extended` in spark_catalog from its own (v1) session catalog,
      which knows no REST table, so dbt-spark's relation cache, qrepl's run lock (`show tables
      ... like`) and `spark.catalog.listTables` would see an empty schema. In a v2 catalog `show
      tables` lists the REST catalog, and `show table extended` fails with "not supported for
      v2 tables", on which dbt-spark lists by `show tables` + `describe table extended`.
    * `spark_catalog`, Iceberg's SparkSessionCatalog (type=rest, the same server): the macros'
      `call spark_catalog.system.*` procedures find the same tables there.

    Spark's session catalog underneath is in-memory: every qrepl table is Iceberg, kept by the
    REST catalog; no metastore, no Derby, no Hive locks (the catalog's 409 on a stale commit is
    the compare-and-swap)."""
    uri = os.environ.get("QREPL_REST_URI", "").strip()
    if not uri:
        raise RuntimeError("QREPL_CATALOG=rest needs QREPL_REST_URI (the catalog's URL, e.g. http://127.0.0.1:8181)")
    parts = urlsplit(uri)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RuntimeError(f"QREPL_REST_URI must be an http(s):// URL, got {uri.split('@')[-1]!r}")
    if parts.username or parts.password:
        raise RuntimeError("QREPL_REST_URI must not carry credentials: put the token in QREPL_REST_TOKEN_FILE")
    properties = rest_properties()
    token_file = os.environ.get("QREPL_REST_TOKEN_FILE", "").strip()
    if not token_file and not any(key in properties for key in REST_AUTH_KEYS):
        raise RuntimeError(
            "QREPL_CATALOG=rest needs QREPL_REST_TOKEN_FILE (an owner-only file holding the bearer token), "
            "or QREPL_REST_PROPERTIES_FILE setting credential, token, rest.auth.type or rest.sigv4-enabled"
        )
    if token_file and "token" in properties:
        raise RuntimeError(
            "QREPL_REST_TOKEN_FILE and QREPL_REST_PROPERTIES_FILE's `token` both set the token: keep one"
        )
    common = {"type": "rest", "uri": uri.rstrip("/"), "cache-enabled": "false"}
    for name, var in (("warehouse", "QREPL_REST_WAREHOUSE"), ("prefix", "QREPL_REST_PREFIX")):
        if value := os.environ.get(var, "").strip():
            common[name] = value
    if token_file:
        path = Path(token_file).expanduser()
        if not path.is_file():
            raise RuntimeError(f"QREPL_REST_TOKEN_FILE {path} does not exist")
        common["token"] = read_secret(path)  # refuses a file others can read
    common.update(properties)  # secret, each one (is_secret_setting): spark-defaults.conf only
    conf = {
        "spark.sql.catalogImplementation": "in-memory",
        "spark.sql.defaultCatalog": REST_CATALOG_NAME,
        f"spark.sql.catalog.{REST_CATALOG_NAME}": "org.apache.iceberg.spark.SparkCatalog",
        # the current namespace, as `default` is spark_catalog's: without one a one-part name
        # that is no temporary view (`drop view if exists <temp view>` after it is gone) names
        # a view of no namespace, which Iceberg refuses ("Invalid view identifier")
        f"spark.sql.catalog.{REST_CATALOG_NAME}.default-namespace": "default",
    }
    for catalog in ("spark_catalog", REST_CATALOG_NAME):
        conf.update({f"spark.sql.catalog.{catalog}.{k}": v for k, v in common.items()})
    return conf


def metastore_url() -> str | None:
    """QREPL_METASTORE, or None for the embedded Derby metastore."""
    return os.environ.get("QREPL_METASTORE", "").strip() or None


def postgresql_metastore(url: str) -> tuple[str, str | None, str | None]:
    """(JDBC URL, user, password) of a `postgresql://user:password@host:port/db` or
    `jdbc:postgresql://...` metastore setting."""
    if url.startswith("jdbc:postgresql://"):
        return url, None, None
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres") or not parts.hostname or not parts.path.strip("/"):
        raise RuntimeError(
            f"QREPL_METASTORE must look like postgresql://user:password@host:port/database "
            f"or jdbc:postgresql://host:port/database, got {url.split('@')[-1]!r}"
        )
    port = f":{parts.port}" if parts.port else ""
    jdbc = f"jdbc:postgresql://{parts.hostname}{port}{parts.path}" + (f"?{parts.query}" if parts.query else "")
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else None
    return jdbc, user, password


def metastore_conf(state: Path) -> dict[str, str]:
    """Hive metastore connection: Derby in the state dir, or the shared PostgreSQL one."""
    url = metastore_url()
    if url is None:
        return {
            "spark.hadoop.javax.jdo.option.ConnectionURL":
            # relative to derby.system.home, the state dir (spark.driver.extraJavaOptions): the
            # same text in profiles.yml, whose state dir may be relative to the checkout
            "jdbc:derby:;databaseName=metastore_db;create=true"
        }
    jdbc, user, password = postgresql_metastore(url)
    conf = {
        "spark.hadoop.javax.jdo.option.ConnectionURL": jdbc,
        "spark.hadoop.javax.jdo.option.ConnectionDriverName": "org.postgresql.Driver",
        # the JDBC driver must be on the driver JVM's own class path for DataNucleus to load it
        "spark.driver.extraClassPath": str(postgresql_jdbc_jar()),
        # every qrepl JVM opens its own pools on the one database: keep each small
        "spark.hadoop.datanucleus.connectionPool.maxPoolSize": "4",
        # DataNucleus creates a metastore table on first use of its class. With foreign keys
        # it then ALTERs a referenced table (TBLS) that another connection of the same JVM holds
        # open in a transaction: on PostgreSQL both wait forever. Tables without constraints
        # never wait; init_metastore creates the tables qrepl uses before any other JVM starts.
        "spark.hadoop.datanucleus.schema.autoCreateAll": "false",
        "spark.hadoop.datanucleus.schema.autoCreateTables": "true",
        "spark.hadoop.datanucleus.schema.autoCreateColumns": "true",
        "spark.hadoop.datanucleus.schema.autoCreateConstraints": "false",
    }
    if user:
        conf["spark.hadoop.javax.jdo.option.ConnectionUserName"] = user
    if password:
        conf["spark.hadoop.javax.jdo.option.ConnectionPassword"] = password
    return conf


def driver_class_path() -> str:
    """What `spark-submit --driver-class-path` needs (the Thrift server): the Iceberg jar
    (Thrift sessions fail on Iceberg classes without it) and the metastore's JDBC driver."""
    jars = [str(iceberg_jar())]
    if metastore_url() is not None:
        jars.append(str(postgresql_jdbc_jar()))
    return ":".join(jars)


def spark_conf(state: Path | None = None) -> dict[str, str]:
    state = state or state_dir()
    rest = on_rest_catalog()
    conf = {
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
        # room for every class a run generates, so the next batch compiles none again
        # (Spark keeps 100 by default; docs/performance.md#thresholds-and-choices-measured)
        "spark.sql.codegen.cache.maxEntries": "1000",
        # the plan text Spark builds for its UI at every query and adaptive re-plan: the UI is
        # off here, and "simple" is the cheapest text
        "spark.sql.ui.explainMode": "simple",
        "spark.sql.warehouse.dir": warehouse_dir(state),
        # on a REST catalog the Hive settings below stay (profiles.yml cannot drop keys) unused
        "spark.sql.catalogImplementation": "in-memory" if rest else "hive",  # rest_conf
        "spark.hadoop.datanucleus.schema.autoCreateAll": "true",
        **metastore_conf(state),
        "spark.hadoop.hive.metastore.schema.verification": "false",
        # Iceberg's lock on a table in the metastore (HIVE_LOCKS), held while it commits: a live
        # holder heartbeats it every 10 s (Iceberg's default is 4 min), so one not heartbeaten
        # for METASTORE_LOCK_TIMEOUT_SECONDS belongs to a process that died inside a commit and
        # remove_abandoned_locks may remove it
        "spark.hadoop.iceberg.hive.lock-heartbeat-interval-ms": "10000",
        "spark.hadoop.hive.txn.timeout": f"{METASTORE_LOCK_TIMEOUT_SECONDS}s",
        # FAIR between pools: the run lock's lease renewals run in a pool of their own
        # (run_lock.LEASE_POOL) and get a task slot as soon as one frees, instead of queueing
        # behind every task of a long stage; every other job shares the default pool, which
        # runs its jobs in order (FIFO) as before
        "spark.scheduler.mode": "FAIR",
        # the parallel collector: a batch is throughput work, and on two cores G1's concurrent
        # threads take CPU from the tasks (docs/performance.md#thresholds-and-choices-measured)
        # iceberg.scan.plan-in-worker-pool=false: Iceberg plans a scan's manifests in the
        # calling thread instead of a worker pool the caller polls in sleeps (a run's tables
        # have few manifests each; docs/performance.md#thresholds-and-choices-measured)
        "spark.driver.extraJavaOptions": f"-XX:+UseParallelGC -Dderby.system.home={state} "
        "-Dderby.stream.error.file=derby.log "  # in derby.system.home
        "-Diceberg.scan.plan-in-worker-pool=false "
        f"-Dlog4j2.configurationFile={state / 'conf' / 'log4j2.properties'}",
        "spark.executor.extraJavaOptions": "-XX:+UseParallelGC",
        # a link write_spark_conf_dir keeps pointing at iceberg_jar(): profiles.yml names the
        # same path, so plain dbt needs no path into the venv
        "spark.jars": str(state / "conf" / ICEBERG_JAR_LINK),
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.sql.catalog.spark_catalog": "org.apache.iceberg.spark.SparkSessionCatalog",
        "spark.sql.catalog.spark_catalog.type": "rest" if rest else "hive",
        "spark.sql.catalog.spark_catalog.cache-enabled": "false",
        "spark.sql.sources.partitionOverwriteMode": "dynamic",
        "spark.sql.session.timeZone": "UTC",
        # Parquet files hold dates and timestamps in the proleptic Gregorian calendar (Iceberg's,
        # Spark 3's, pyarrow's): read and write them as they are. The default refuses a date
        # before 1582-10-15 or a timestamp before 1900 in a file without Spark 3's own marker,
        # which is every Iceberg data file the publisher's trigger reads (docs/stack.md 37)
        **{
            f"spark.sql.parquet.{kind}RebaseModeIn{way}": "CORRECTED"
            for kind in ("datetime", "int96")
            for way in ("Read", "Write")
        },
        # dbt-spark's incremental models insert from SQL temporary views (`<model>__dbt_tmp`);
        # keeping each view's analyzed plan spares re-resolving (and reloading) every Iceberg
        # table underneath when the view is read
        "spark.sql.legacy.storeAnalyzedPlanForView": "true",
        # files and directories Hadoop creates (the warehouse, Hive's database folders) are
        # owner-only: Hadoop applies its own umask, not the process's
        "spark.hadoop.fs.permissions.umask-mode": "077",
        # RPC and block transfers between this application's JVMs (and, on a cluster, with the
        # master and worker) need the shared secret; a local session generates its own
        "spark.authenticate": "true",
        **({"spark.authenticate.secret": secret} if (secret := spark_secret()) else {}),
        # the master's web UI cannot kill applications (it has no authentication)
        "spark.ui.killEnabled": "false",
    }
    if rest:
        conf.update(rest_conf())
    return conf


def write_spark_conf_dir(state: Path | None = None) -> Path:
    """Write spark-defaults.conf and log4j2.properties, and link the Iceberg jar; return the
    folder (SPARK_CONF_DIR). Plain dbt's `local` target (profiles.yml) reads the last two."""
    state = state or state_dir()
    conf_dir = make_private_dir(state / "conf")
    _link_atomically(conf_dir / ICEBERG_JAR_LINK, iceberg_jar())
    lines = [f"{k} {v}" for k, v in spark_conf(state).items()]
    _write_atomically(conf_dir / "spark-defaults.conf", "\n".join(lines) + "\n")
    _write_atomically(conf_dir / "log4j2.properties", LOG4J2)
    return conf_dir


def _link_atomically(link: Path, target: Path) -> None:
    """`link` -> `target`, replaced in one rename (a JVM starting beside never sees it missing)."""
    if link.is_symlink() and os.readlink(link) == str(target):
        return
    tmp = link.with_name(f".{link.name}.{os.getpid()}")
    tmp.unlink(missing_ok=True)
    os.symlink(target, tmp)
    os.replace(tmp, link)


def _write_atomically(path: Path, text: str) -> None:
    """Several processes of a deployment share one conf dir: a JVM starting beside a writer
    must never read a half-written file. Owner-only from its first byte: it may hold the
    metastore password and the cluster's secret."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.unlink(missing_ok=True)  # a dead process's leftover of the same pid
    write_private_file(tmp, text)
    os.replace(tmp, path)


def prepare_environment(state: Path | None = None) -> Path:
    state = state or state_dir()
    private_umask()  # this process and the JVM it starts write owner-only files
    make_private_dir(state)
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

    from pyspark import SparkContext

    # The first session of a process launches the JVM with `spark-submit --conf k=v ...`: the
    # secrets stay out of that command line and come from SPARK_CONF_DIR's owner-only
    # spark-defaults.conf. A later session of the same process (its JVM already up) takes its
    # settings over the Py4J socket, secrets included.
    jvm_running = SparkContext._gateway is not None
    builder = SparkSession.builder
    for k, v in spark_conf(state).items():
        if jvm_running or not is_secret_setting(k, v):
            builder = builder.config(k, v)
    if not on_rest_catalog():
        builder = builder.enableHiveSupport()
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    if not on_rest_catalog():
        _ensure_hive_lock_tables(spark, state)
    else:
        _reach_rest_catalog(spark)
    from .faults import install_from_env

    install_from_env()  # the crash tests' fault points; nothing happens unless QREPL_FAULT is set
    _SESSION = spark
    return spark


def _reach_rest_catalog(spark) -> None:
    """Load both REST catalogs now (Iceberg's RESTCatalog fetches its OAuth2 token and the
    server's /v1/config): wrong credentials or an unreachable server are one line at the
    session's start, not a Java stack trace at its first statement. The line is the server's
    answer (a 401's OAuthError, say), which names no secret."""
    manager = spark._jsparkSession.sessionState().catalogManager()
    for catalog in (REST_CATALOG_NAME, "spark_catalog"):
        try:
            manager.catalog(catalog)
        except Exception as exc:  # py4j's Py4JJavaError: its Java exception's own line
            java = getattr(exc, "java_exception", None)
            cause = java.toString() if java is not None else str(exc).strip().splitlines()[0]
            uri = os.environ.get("QREPL_REST_URI", "").strip()
            raise RuntimeError(f"the REST catalog at {uri} refused qrepl's session: {cause}") from exc


def hive_conf(spark, state: Path | None = None):
    """A JVM HiveConf with qrepl's `spark.hadoop.*` settings (the metastore this process uses),
    for the metastore's own Java API: its transaction tables and its lock store."""
    conf = spark._jvm.org.apache.hadoop.hive.conf.HiveConf()
    for k, v in spark_conf(state).items():
        if k.startswith("spark.hadoop."):
            conf.set(k[len("spark.hadoop.") :], v)
    return conf


def _ensure_hive_lock_tables(spark, state: Path) -> None:
    """Iceberg's Hive locks stay ON; they need HMS transaction tables, created once per metastore."""
    url = metastore_url()
    # one marker per metastore: a state dir may point at several over its life
    marker = state / (
        ".hive_txn_tables" if url is None else f".hive_txn_tables_{hashlib.sha256(url.encode()).hexdigest()[:12]}"
    )
    if marker.exists():
        return
    spark.sql("show databases").collect()  # boots the metastore so it has its schema
    if url is not None:
        _create_postgresql_lock_tables(spark, url)
        marker.write_text("created\n")
        return
    jvm = spark._jvm
    try:
        jvm.org.apache.hadoop.hive.metastore.txn.TxnDbUtil.prepDb(hive_conf(spark, state))
    except Exception as exc:  # not idempotent: a second call reports existing tables
        if "already exists" not in str(exc).lower():
            raise
    marker.write_text("created\n")


def remove_abandoned_locks(spark, state: Path | None = None):
    """Remove the metastore's table locks (HIVE_LOCKS), of every table, whose holder stopped
    heartbeating them more than METASTORE_LOCK_TIMEOUT_SECONDS ago; returns the metastore's
    transaction store. A process killed inside an Iceberg commit leaves its lock acquired, and
    every later commit to that table waits Iceberg's lock timeout, retries, and fails (about
    15 minutes). A standalone Hive metastore removes such locks from a housekeeping thread; the
    metastore qrepl embeds in each JVM (Hive 2.3.9) never does, so `qrepl run` calls this
    (TxnHandler.performTimeOuts, on the same metastore database) when it starts and at each
    renewal of its lease. On a REST catalog there are no such locks (the catalog's 409 on a
    stale commit is the compare-and-swap): nothing to remove, None."""
    if on_rest_catalog():
        return None
    store = spark._jvm.org.apache.hadoop.hive.metastore.txn.TxnUtils.getTxnStore(hive_conf(spark, state))
    store.performTimeOuts()
    return store


def expire_abandoned_locks(spark, schema: str, table: str, state: Path | None = None) -> int:
    """remove_abandoned_locks, then how many locks schema.table still has: the lock recovery
    and `qrepl unlock` wait while a lock is still held rather than commit into it."""
    jvm = spark._jvm
    store = remove_abandoned_locks(spark, state)
    if store is None:  # a REST catalog: no metastore locks
        return 0
    request = jvm.org.apache.hadoop.hive.metastore.api.ShowLocksRequest()
    request.setDbname(schema)
    request.setTablename(table)
    return len(list(store.showLocks(request).getLocks() or []))


def _postgresql_connection(spark, url: str):
    jdbc, user, password = postgresql_metastore(url)
    props = spark._jvm.java.util.Properties()
    if user:
        props.setProperty("user", user)
    if password:
        props.setProperty("password", password)
    return spark._jvm.org.postgresql.Driver().connect(jdbc, props)


def _create_postgresql_lock_tables(spark, url: str) -> None:
    """prepDb speaks Derby only: on PostgreSQL run the repo's own, idempotent DDL over JDBC."""
    statements = [s.strip() for s in _strip_sql_comments(LOCK_TABLES_SQL.read_text()).split(";") if s.strip()]
    conn = _postgresql_connection(spark, url)
    try:
        stmt = conn.createStatement()
        for statement in statements:
            stmt.execute(statement)
        stmt.close()
    finally:
        conn.close()


# The metastore's own uniqueness, which the Hive schema declares and DataNucleus leaves out
# when it creates tables without constraints: without it two JVMs creating the same database
# or table at once both succeed (duplicate rows), and qrepl's run lock, a table only one
# creator may create, would not be exclusive.
METASTORE_UNIQUE_KEYS = [
    ("qrepl_unique_database", "dbs", ("name",)),
    ("qrepl_unique_table", "tbls", ("db_id", "tbl_name")),
]


def _ensure_metastore_unique_keys(spark, url: str) -> None:
    conn = _postgresql_connection(spark, url)
    try:

        def actual(query: str, *args: str) -> str:
            ps = conn.prepareStatement(query)
            for i, a in enumerate(args, 1):
                ps.setString(i, a)
            rs = ps.executeQuery()
            found = rs.getString(1) if rs.next() else None
            ps.close()
            if found is None or not found.replace("_", "").isalnum():
                raise RuntimeError(f"metastore table or column {args[-1]} not found in {url}")
            return found

        stmt = conn.createStatement()
        for index, table, columns in METASTORE_UNIQUE_KEYS:
            name = actual(
                "select table_name from information_schema.tables where lower(table_name) = ? "
                "and table_schema = current_schema()",
                table,
            )
            cols = [
                actual(
                    "select column_name from information_schema.columns where table_name = ? "
                    "and lower(column_name) = ? and table_schema = current_schema()",
                    name,
                    c,
                )
                for c in columns
            ]
            # identifiers read back from the catalog and checked above, quoted as found
            stmt.execute(
                f'create unique index if not exists {index} on "{name}" (' + ", ".join(f'"{c}"' for c in cols) + ")"
            )
        stmt.close()
    finally:
        conn.close()


def _strip_sql_comments(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))


def stop_spark() -> None:
    global _SESSION
    if _SESSION is not None:
        _SESSION.stop()
        _SESSION = None


def init_metastore() -> None:
    """Create the metastore schema and the Hive lock tables before any other JVM uses them
    (the deployment scripts call this once, right after starting PostgreSQL)."""
    if on_rest_catalog():
        raise RuntimeError("QREPL_CATALOG=rest has no metastore to initialize")
    spark = get_spark()
    # every kind of metastore object qrepl creates, once: their tables exist before other JVMs
    # (and other connections of one JVM) need them
    probe = "qrepl_metastore_init"
    for statement in [
        f"create database if not exists {probe}",
        f"create table {probe}.hive_table (a int, b string) using parquet partitioned by (b)",
        f"insert into {probe}.hive_table values (1, 'x')",
        f"analyze table {probe}.hive_table compute statistics for columns a",
        f"create table {probe}.iceberg_table (a int) using iceberg",
        f"insert into {probe}.iceberg_table values (1)",
        f"alter table {probe}.iceberg_table set tblproperties ('qrepl.probe'='1')",
        f"create view {probe}.a_view as select a from {probe}.hive_table",
        f"drop view {probe}.a_view",
        f"drop table {probe}.hive_table purge",
        f"drop table {probe}.iceberg_table purge",
        f"drop database {probe} cascade",
    ]:
        spark.sql(statement).collect()
    _ensure_metastore_unique_keys(spark, metastore_url())
    print(
        f"metastore ready: {spark.conf.get('spark.hadoop.javax.jdo.option.ConnectionURL')}, "
        f"warehouse {spark.conf.get('spark.sql.warehouse.dir')}"
    )


def launch_settings() -> str:
    """SPARK_HOME, driver class path and SPARK_CONF_DIR, one per line, for the shell scripts."""
    import pyspark

    prepare_environment()
    return "\n".join([str(Path(pyspark.__file__).parent), driver_class_path(), os.environ["SPARK_CONF_DIR"]])


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    try:
        if command == "init-metastore":
            init_metastore()
            stop_spark()
        elif command == "launch-settings":
            print(launch_settings())
        elif command == "ensure-secret" and len(sys.argv) == 3:
            private_umask()
            ensure_secret(Path(sys.argv[2]).resolve())
        else:
            sys.exit("usage: python -m qrepl.storage.spark init-metastore|launch-settings|ensure-secret FILE")
    except RuntimeError as exc:
        sys.exit(f"qrepl: error: {exc}")
