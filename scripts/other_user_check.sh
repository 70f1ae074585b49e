#!/usr/bin/env bash
# The running topology of $QREPL_DEPLOY_DIR seen from another OS user (docs/security.md): as
# the user $QREPL_OTHER_USER (qrepl-other, created here with useradd if missing), every one of
# these must be refused:
#   thrift-nosasl      a Thrift session without SASL (what the old NOSASL server accepted)
#   thrift-guess       a Thrift login as qrepl with a guessed password
#   postgres           the metastore database over TCP without the password, and over its socket
#   spark-master       registering an application with the Spark master without the cluster secret
#   warehouse          listing the warehouse, reading one of its data files
#   state-files        any file under the state dir or PostgreSQL's directory
#   secrets            any of the secrets (metastore password, Thrift password, cluster secret)
#                      in `ps`, /proc/*/cmdline, /proc/*/environ or any readable file under the
#                      checkout, the state dir, PostgreSQL's directory, /tmp, /var/tmp, /dev/shm,
#                      while a Python-layer JVM (a qrepl session on the metastore) is running
# The other user never receives a secret: it dumps what it can read and this script (root)
# searches the dump for the secrets. Run as root (useradd, runuser), after
# `source $QREPL_DEPLOY_DIR/env.sh`; `make deploy-test` runs it on its topology before stopping it.
set -uo pipefail
umask 077
cd "$(dirname "$0")/.."
CHECKOUT="$PWD"
[ "$(id -u)" = 0 ] || { echo "other_user_check: needs root (useradd, runuser)"; exit 2; }
: "${QREPL_DEPLOY_DIR:?set QREPL_DEPLOY_DIR (source the env.sh of the deployment)}"
# shellcheck disable=SC1091
source "$QREPL_DEPLOY_DIR/env.sh"
OTHER="${QREPL_OTHER_USER:-qrepl-other}"
OTHER_HOME="/var/tmp/$OTHER-home"
PGDIR="${QREPL_PG_DIR:-$(bash scripts/postgres.sh dir)}"
PG_PORT="${QREPL_PG_PORT:-5433}"
MASTER_URL="${QREPL_THRIFT_MASTER:-spark://127.0.0.1:7077}"
MASTER_UI="http://127.0.0.1:${QREPL_MASTER_UI_PORT:-8080}/json/"
PY="$CHECKOUT/.venv/bin/python"
SCRATCH=$(mktemp -d /tmp/qrepl-other-check.XXXXXX)  # root's, 0700
failures=0
probe_pid=""
cleanup() { [ -n "$probe_pid" ] && kill "$probe_pid" 2>/dev/null; rm -rf "$SCRATCH"; }
trap cleanup EXIT

if ! id -u "$OTHER" >/dev/null 2>&1; then
    useradd --system --home-dir "$OTHER_HOME" --shell /bin/sh "$OTHER"
fi
mkdir -p "$OTHER_HOME" && chown "$OTHER" "$OTHER_HOME" && chmod 700 "$OTHER_HOME"
# the other user's Python: the system's, of the venv's version, with the venv's packages (PyHive,
# PySpark); the venv's own interpreter may sit in a directory closed to other users (/root/.pyenv)
SITE=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
OTHER_PY=/usr/bin/python$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
[ -x "$OTHER_PY" ] || OTHER_PY=/usr/bin/python3
as_other() {  # a clean environment: nothing of ours (no secrets) reaches the other user
    (cd / && runuser -u "$OTHER" -- env -i PATH=/usr/bin:/bin HOME="$OTHER_HOME" TZ=UTC PYTHONPATH="$SITE" "$@")
}
if ! as_other "$OTHER_PY" -c 'import pyhive, pyspark' 2>/dev/null; then
    echo "other_user_check: $OTHER cannot import PyHive and PySpark from $SITE with $OTHER_PY"
    echo "  (the checkout is closed to other users?); nothing checked"
    exit 2
fi

result() {  # result NAME REFUSED(0/1) DETAIL
    if [ "$2" = 1 ]; then echo "  refused  $1: $3"; else echo "  ALLOWED  $1: $3"; failures=$((failures + 1)); fi
}

# the secrets to search for (root-only file)
{
    "$PY" - <<'PY'
import os
from qrepl.storage.spark import postgresql_metastore
url = os.environ.get("QREPL_METASTORE", "")
if url:
    _, _, password = postgresql_metastore(url)
    if password:
        print(password)
PY
    for f in "${QREPL_THRIFT_PASSWORD_FILE:-}" "${QREPL_SPARK_SECRET_FILE:-}"; do
        [ -n "$f" ] && [ -f "$f" ] && head -1 "$f"
    done
} | grep -v '^$' > "$SCRATCH/secrets"
echo "other_user_check: as OS user $OTHER against $QREPL_DEPLOY_DIR ($(wc -l < "$SCRATCH/secrets") secrets to look for)"

# A Python-layer JVM on the metastore, alive while the other user looks at ps and /proc
"$PY" -c "
from qrepl.storage.spark import get_spark
get_spark().sql('show databases').collect()
print('session up', flush=True)
import time; time.sleep(900)
" > "$SCRATCH/probe.log" 2>&1 &
probe_pid=$!

# -- Thrift --------------------------------------------------------------------------------
out=$(as_other timeout 60 "$OTHER_PY" -c "
from pyhive import hive
c = hive.connect('127.0.0.1', $QREPL_THRIFT_PORT, auth='NOSASL', username='intruder').cursor()
c.execute('select 1'); print('CONNECTED', c.fetchall())
" 2>&1)
if grep -q CONNECTED <<<"$out"; then result thrift-nosasl 0 "a NOSASL session ran SQL"; else
    result thrift-nosasl 1 "$(grep -v '^ ' <<<"$out" | tail -1 | cut -c1-150)"; fi
out=$(as_other timeout 60 "$OTHER_PY" -c "
from pyhive import hive
for pw in ('qrepl', 'password', 'x'):
    try:
        c = hive.connect('127.0.0.1', $QREPL_THRIFT_PORT, auth='CUSTOM', username='qrepl', password=pw).cursor()
        c.execute('select 1'); print('CONNECTED', pw, c.fetchall())
    except Exception as e:
        print('refused', type(e).__name__, str(e)[:120].replace(chr(10), ' '))
" 2>&1)
if grep -q CONNECTED <<<"$out"; then result thrift-guess 0 "$(grep CONNECTED <<<"$out" | head -1)"; else
    result thrift-guess 1 "$(tail -1 <<<"$out" | cut -c1-150)"; fi

# -- PostgreSQL ------------------------------------------------------------------------------
out=$(as_other timeout 30 psql -w -h 127.0.0.1 -p "$PG_PORT" -U qrepl -d qrepl_metastore -tAc 'select 1' 2>&1)
out2=$(as_other timeout 30 psql -w -h "$PGDIR/run" -p "$PG_PORT" -U qrepl -d qrepl_metastore -tAc 'select 1' 2>&1)
if [ "$out" = 1 ] || [ "$out2" = 1 ]; then result postgres 0 "connected without the password"; else
    result postgres 1 "$(tail -1 <<<"$out" | cut -c1-100) / socket: $(tail -1 <<<"$out2" | cut -c1-80)"; fi

# -- the Spark master ------------------------------------------------------------------------
# The master's own list of applications (its JSON status, active and completed) says whether
# the other user's application registered: it does within seconds when the master takes it;
# with spark.authenticate the master drops the connection and the client gives up after its
# retries (about a minute). The client's own view is not used: it races with its shutdown.
app="qrepl-other-user-probe-$$"
if ! curl -s "$MASTER_UI" | grep -q aliveworkers; then
    result spark-master 0 "cannot read the master's status at $MASTER_UI: nothing checked"
else
    as_other timeout 150 "$OTHER_PY" -c "
from pyspark.sql import SparkSession
s = (SparkSession.builder.master('$MASTER_URL').appName('$app')
     .config('spark.ui.enabled', 'false').config('spark.driver.memory', '512m')
     .config('spark.executor.memory', '512m').config('spark.cores.max', '1')
     .config('spark.driver.host', '127.0.0.1').config('spark.driver.bindAddress', '127.0.0.1').getOrCreate())
print('client done', flush=True)
s.stop()
" > "$SCRATCH/submit.log" 2>&1 &
    submit_pid=$!
    registered=0
    while kill -0 "$submit_pid" 2>/dev/null; do
        if curl -s "$MASTER_UI" | grep -q "\"$app\""; then registered=1; break; fi
        sleep 2
    done
    curl -s "$MASTER_UI" | grep -q "\"$app\"" && registered=1
    kill "$submit_pid" 2>/dev/null; wait "$submit_pid" 2>/dev/null
    if [ "$registered" = 1 ]; then result spark-master 0 "application $app registered with $MASTER_URL"; else
        result spark-master 1 "not in the master's applications; client: $({ grep -E 'unresponsive|Giving up' "$SCRATCH/submit.log" || grep -E 'Exception' "$SCRATCH/submit.log"; } | head -1 | cut -c1-120)"; fi
fi

# -- files -----------------------------------------------------------------------------------
datafile=$(find "$QREPL_WAREHOUSE" -type f \( -name '*.parquet' -o -name '*.metadata.json' \) 2>/dev/null | head -1)
out=$(as_other ls "$QREPL_WAREHOUSE" 2>&1); rc_ls=$?
out2=$(as_other cat "$datafile" 2>&1 >/dev/null); rc_cat=$?
if [ -z "$datafile" ]; then result warehouse 0 "no data file found in $QREPL_WAREHOUSE to try"
elif [ "$rc_ls" = 0 ] || [ "$rc_cat" = 0 ]; then result warehouse 0 "listed ($rc_ls) or read ($rc_cat) $datafile"; else
    result warehouse 1 "$(tail -1 <<<"$out" | cut -c1-90) / $(tail -1 <<<"$out2" | cut -c1-90)"; fi
readable=$(as_other find "$QREPL_DEPLOY_DIR" "$PGDIR" -type f -readable 2>/dev/null)
if [ -n "$readable" ]; then result state-files 0 "$(wc -l <<<"$readable") readable, e.g. $(head -1 <<<"$readable")"; else
    result state-files 1 "no file under $QREPL_DEPLOY_DIR or $PGDIR is readable"; fi

# -- secrets in ps, /proc and files, while the Python-layer JVM runs ------------------------
for _ in $(seq 1 300); do grep -q 'session up' "$SCRATCH/probe.log" && break
    kill -0 "$probe_pid" 2>/dev/null || break; sleep 1; done
if ! grep -q 'session up' "$SCRATCH/probe.log"; then
    result secrets 0 "the Python-layer session did not start: $(tail -3 "$SCRATCH/probe.log")"
else
    # what the other user can see: every command line, every environment it may read, and every
    # readable file (up to 5 MB each) in the checkout and the places qrepl writes
    as_other sh -c '
        ps -eww -o args; for f in /proc/[0-9]*/cmdline /proc/[0-9]*/environ; do tr "\0" "\n" < "$f"; done 2>/dev/null
        find "$@" -xdev \( -path "*/.venv" -o -path "*/node_modules" -o -path "*/.git" \) -prune -o \
            -type f -readable -size -5M -print0 2>/dev/null | xargs -0 -r cat 2>/dev/null' sh \
        "$CHECKOUT" "$QREPL_DEPLOY_DIR" "$PGDIR" /tmp /var/tmp /dev/shm > "$SCRATCH/seen" 2>/dev/null
    environs=$(as_other sh -c 'n=0; for f in /proc/[0-9]*/environ; do head -c1 "$f" >/dev/null 2>&1 && n=$((n+1)); done; echo $n')
    if [ ! -s "$SCRATCH/secrets" ]; then result secrets 0 "no secret known to search for"
    elif grep -q -F -f "$SCRATCH/secrets" "$SCRATCH/seen"; then
        where=$(grep -a -F -f "$SCRATCH/secrets" "$SCRATCH/seen" | head -1 | grep -a -o '^[^ ]*' | cut -c1-80)
        result secrets 0 "a secret is visible (in a line starting $where)"
    else
        result secrets 1 "none of $(wc -l < "$SCRATCH/secrets") secrets in $(wc -c < "$SCRATCH/seen") bytes of ps, /proc and files ($environs environ files readable: the user's own)"
    fi
fi

if [ "$failures" = 0 ]; then echo "other_user_check: PASS (every check refused)"; exit 0; fi
echo "other_user_check: FAIL ($failures allowed)"; exit 1
