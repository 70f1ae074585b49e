#!/usr/bin/env bash
# `make deploy-demo`: the shared topology, left running with a small publication to look at.
set -euo pipefail
umask 077
cd "$(dirname "$0")/.."
export QREPL_DEPLOY_DIR="${QREPL_DEPLOY_DIR:-$PWD/.qrepl_state/deploy}"
bash scripts/deploy.sh start
# shellcheck disable=SC1091
source "$QREPL_DEPLOY_DIR/env.sh"
export QREPL_SCHEMA="${QREPL_SCHEMA:-qrepl_deploy}"
if [ ! -f "$QREPL_DEPLOY_DIR/.demo_loaded_$QREPL_SCHEMA" ]; then
    # one process (one JVM start) for the publication, two subscriptions and their first changes
    .venv/bin/python - <<'PY'
from qrepl.services.capture import Subscriber
from qrepl.services.publication import create_publication
from qrepl.storage.open import warehouse

create_publication("publications/sales.yml", seed=True)
wh = warehouse()
wh.add_subscriptions(["north", "south"])
north, south = Subscriber(wh.schema, "north"), Subscriber(wh.schema, "south")
for subscriber in (north, south):
    subscriber.replica.snapshot_from_publisher()
with north.transaction() as t:
    t.update("customers", {"customer_id": 1}, {"city": "Cambridge"})
with south.transaction() as t:   # the same row, from the version both saw: a conflict
    t.update("customers", {"customer_id": 1}, {"credit_limit": "9000.00"})
with south.transaction() as t:
    t.insert("customers", {"customer_id": 50, "name": "Edsger", "city": "Austin", "credit_limit": "100.00"})
print("publication sales, subscribers north and south, 3 transactions captured")
PY
    .venv/bin/dbt run --project-dir . --profiles-dir . --target thrift --quiet
    .venv/bin/qrepl distribute
    touch "$QREPL_DEPLOY_DIR/.demo_loaded_$QREPL_SCHEMA"
fi
cat <<TXT

The qrepl topology is running (state: $QREPL_DEPLOY_DIR):
  PostgreSQL metastore 127.0.0.1:${QREPL_PG_PORT:-5433}, Spark master spark://127.0.0.1:${QREPL_MASTER_PORT:-7077}
  (web UI http://127.0.0.1:${QREPL_MASTER_UI_PORT:-8080}), Thrift server 127.0.0.1:$QREPL_THRIFT_PORT on that cluster.

Every qrepl process needs the deployment's settings first:
  source $QREPL_DEPLOY_DIR/env.sh
  export QREPL_SCHEMA=$QREPL_SCHEMA

Then, from any number of shells at once:
  .venv/bin/qrepl status                          # queue depth, last run
  .venv/bin/qrepl conflicts                       # the conflict the demo produced
  .venv/bin/qrepl viewer --out out/viewer         # open out/viewer/index.html
  .venv/bin/dbt build --project-dir . --profiles-dir . --target thrift   # the queue reader, on the cluster
  .venv/bin/qrepl distribute

The Thrift server asks for a user and password (docs/security.md): user $QREPL_THRIFT_USER, password
in the owner-only file $QREPL_THRIFT_PASSWORD_FILE (env.sh exports it as QREPL_THRIFT_PASSWORD).
  dbt:     the thrift target reads QREPL_THRIFT_USER / QREPL_THRIFT_PASSWORD (profiles.yml)
  beeline: $(.venv/bin/python -c "import pyspark, os; print(os.path.dirname(pyspark.__file__))")/bin/beeline -u 'jdbc:hive2://127.0.0.1:$QREPL_THRIFT_PORT/$QREPL_SCHEMA' -n "\$QREPL_THRIFT_USER" -w "\$QREPL_THRIFT_PASSWORD_FILE" -e 'select * from customers'
  PyHive:  .venv/bin/python -c "import os; from pyhive import hive; c = hive.connect('127.0.0.1', $QREPL_THRIFT_PORT, auth='CUSTOM', username=os.environ['QREPL_THRIFT_USER'], password=os.environ['QREPL_THRIFT_PASSWORD']).cursor(); c.execute('select * from $QREPL_SCHEMA.conflicts'); print(c.fetchall())"
(beeline's -w reads the password from the file: never put it on a command line, where ps shows it.)

Stop everything with: make deploy-stop
TXT
