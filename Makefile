# qrepl: the single entry point. `make demo` and `make test` need nothing but the image
# (Python 3.11 + Java 17): the first call builds .venv from requirements.lock.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# pytest workers for `make test`, each with its own Spark JVM (local[2], -Xmx4g) and state
# directory: two on two cores, the tests being CPU-bound (docs/testing.md#how-many-workers)
TEST_WORKERS ?= 2
export QREPL_STATE_DIR ?= $(CURDIR)/.qrepl_state
N ?= 300
MINUTES ?= 10
PACK ?= 25

.PHONY: demo test test-all browser thrift-test thrift-start thrift-stop lint conformance faults clean \
	metastore-driver cluster-start cluster-stop deploy-start deploy-stop deploy-demo deploy-test \
	rest-driver rest-start rest-stop test-rest conformance-rest bench-rest
.PHONY: partition-check example concurrency soak test-fast lint-js package-check package-demo bench bench-history bench-profile bench-replay bench-scale bench-writes bench-stamp bench-statements

$(STAMP): requirements.lock requirements.txt pyproject.toml
	@command -v java >/dev/null || { echo "qrepl: java not found: install Java 17 (apt-get install openjdk-17-jre-headless)"; exit 1; }
	@test -d $(VENV) || python3 -m venv $(VENV)
	@$(VENV)/bin/pip install -q --disable-pip-version-check -r requirements.lock
	@$(VENV)/bin/pip install -q --disable-pip-version-check --no-deps -e .
	@touch $(STAMP)

demo: $(STAMP)          ## the whole loop on the embedded Spark, with a summary
	$(VENV)/bin/qrepl demo

test: $(STAMP) browser metastore-driver rest-driver  ## the tests CI runs: unit, scenario, property, fault, end-to-end and browser (about 30 min; make test-all adds the long variants)
	rm -rf $(CURDIR)/.qrepl_state/test
	QREPL_STATE_DIR=$(CURDIR)/.qrepl_state/test $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --durations=40 \
		-m "not long" --junitxml=$(CURDIR)/.qrepl_state/test/junit.xml  # every test's time, for whoever tunes CI

test-all: $(STAMP) browser metastore-driver rest-driver  ## every test: make test's and the long ones of python/tests/long_tests.txt (about an hour)
	rm -rf $(CURDIR)/.qrepl_state/test-all
	QREPL_STATE_DIR=$(CURDIR)/.qrepl_state/test-all $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --durations=40 \
		--junitxml=$(CURDIR)/.qrepl_state/test-all/junit.xml

test-fast: $(STAMP)     ## python/tests/unit only: pure Python, no JVM, no browser (under a minute)
	$(PY) -m pytest -q python/tests/unit

browser:                ## Debian's Chromium + ChromeDriver for the viewer's browser test
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
		{ echo "installing chromium for the browser tests (apt-get)"; \
		  apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null; }

example: $(STAMP)       ## examples/downstream: a dbt project with qrepl as a package (packages.yml), plain `dbt build` on a workload
	rm -rf $(CURDIR)/.qrepl_state/example
	QREPL_STATE_DIR=$(CURDIR)/.qrepl_state/example bash scripts/example.sh

thrift-test: $(STAMP)   ## dbt build against a real Spark Thrift Server (started and stopped here)
	bash scripts/thrift_test.sh

thrift-start: $(STAMP)
	bash scripts/thrift.sh start

thrift-stop:
	bash scripts/thrift.sh stop

package-check:          ## pip install . in a fresh venv; qrepl --help and the packaged dbt project, from /tmp
	bash scripts/package_check.sh

package-demo:           ## the same, then `qrepl demo` from /tmp (about 2 min of CPU)
	FULL=1 bash scripts/package_check.sh

# -- the shared topology (docs/deploying.md): PostgreSQL metastore, Spark cluster, Thrift server
metastore-driver:       ## Debian's PostgreSQL JDBC driver for a shared metastore
	@test -f /usr/share/java/postgresql.jar || \
		{ echo "installing the PostgreSQL JDBC driver (apt-get)"; \
		  apt-get update -qq && apt-get install -y -qq libpostgresql-jdbc-java >/dev/null; }

# -- an Iceberg REST catalog (test server, docs/deploying.md): Iceberg's handlers over a JDBC catalog
rest-driver:            ## Debian's SQLite JDBC driver for the REST catalog test server's catalog
	@test -f /usr/share/java/sqlite-jdbc.jar || \
		{ echo "installing the SQLite JDBC driver (apt-get)"; \
		  apt-get update -qq && apt-get install -y -qq libxerial-sqlite-jdbc-java >/dev/null; }

rest-start: $(STAMP) rest-driver  ## the REST catalog on 127.0.0.1:8181 (QREPL_REST_PORT); bearer token in .qrepl_state/secrets/rest-token, OAuth2 client qrepl's secret in .qrepl_state/secrets/rest-client-secret
	bash scripts/rest_catalog.sh start

rest-stop:              ## stops it (by its own pid)
	bash scripts/rest_catalog.sh stop

REST_TESTS ?= python/tests/spark/test_run_lock.py python/tests/e2e/test_crash_kill.py
test-rest: $(STAMP) rest-driver  ## the run lock and crash-kill tests on a REST catalog test server of their own (about 7 min; in CI; REST_TESTS=... for others)
	bash scripts/on_rest_catalog.sh rest-test $(PY) -m pytest -q --durations=5 $(REST_TESTS)

conformance-rest: $(STAMP) rest-driver  ## `make conformance` on a REST catalog test server of its own (N per policy, default 300; the issue's check is N=100)
	QREPL_CONFORMANCE_EXAMPLES=$(N) QREPL_CONFORMANCE_COUPLED=$(N) QREPL_SCENARIO_POLICIES=all \
		QREPL_CONFORMANCE_PACK=$(PACK) QREPL_CONFORMANCE_LOG=$(CURDIR)/.qrepl_state/conformance-rest.log \
		bash scripts/on_rest_catalog.sh conformance-rest $(PY) -m pytest -q \
		python/tests/spark/test_conformance.py python/tests/spark/test_replay_spark.py

bench-rest: $(STAMP) rest-driver  ## `make bench`'s 1k rows (first and next batch) on a REST catalog test server of its own; writes bench/REST.md
	bash scripts/on_rest_catalog.sh bench-rest $(PY) bench/bench.py --sizes 1k --markdown bench/REST.md

cluster-start: $(STAMP) ## a Spark standalone master + worker on 127.0.0.1 (7077; web UI 8080)
	bash scripts/cluster.sh start

cluster-stop:
	bash scripts/cluster.sh stop

deploy-start: $(STAMP) metastore-driver  ## PostgreSQL + cluster + Thrift server on it; settings in .qrepl_state/deploy/env.sh
	bash scripts/deploy.sh start

deploy-stop:            ## stops what deploy-start / deploy-demo started
	bash scripts/deploy.sh stop

deploy-demo: $(STAMP) metastore-driver  ## the topology with a small publication, left running
	bash scripts/deploy_demo.sh

deploy-test: $(STAMP) metastore-driver  ## concurrent captures + dbt runs on the cluster + distribution vs the reference
	bash scripts/deploy_test.sh

bench: $(STAMP)         ## reader vs bare MERGE vs Python fold, every size (SIZES="1k 100k" for fewer); writes bench/RESULTS.md and, run whole, the README table
	rm -rf $(CURDIR)/.qrepl_state/bench
	QREPL_STATE_DIR=$(CURDIR)/.qrepl_state/bench $(PY) bench/bench.py $(if $(SIZES),--sizes $(SIZES)) \
		--markdown bench/RESULTS.md --readme README.md

bench-scale: $(STAMP)   ## 10M changes over 10M rows (about half an hour): where the Python fold runs out; writes bench/SCALE.md
	rm -rf $(CURDIR)/.qrepl_state/bench
	QREPL_STATE_DIR=$(CURDIR)/.qrepl_state/bench $(PY) bench/bench.py --sizes 10M --markdown bench/SCALE.md

bench-stamp: $(STAMP)   ## the publisher's trigger on a 10M-row table: idle, after a reader batch, after 1k outside UPDATEs (ROWS=, CHANGES=); writes bench/STAMP.md
	rm -rf $(CURDIR)/.qrepl_state/bench-stamp
	QREPL_STATE_DIR=$(CURDIR)/.qrepl_state/bench-stamp $(PY) bench/stamp_bench.py \
		$(if $(ROWS),--rows $(ROWS)) $(if $(CHANGES),--changes $(CHANGES)) --markdown bench/STAMP.md

bench-history: $(STAMP) ## a 1k batch on a fresh publication and after 1M commands of history, per model (HISTORY=..., BATCH=...)
	rm -rf $(CURDIR)/.qrepl_state/bench-history
	QREPL_STATE_DIR=$(CURDIR)/.qrepl_state/bench-history $(PY) bench/history_bench.py \
		$(if $(HISTORY),--history $(HISTORY)) $(if $(BATCH),--batch $(BATCH))

bench-profile: $(STAMP) ## each step (CTE) of one model timed on a bench batch, nothing written (MODEL=int_batch_commands SIZE=100k); AGAINST=<commit> compares the model with that commit's instead (WRITE=1: written to Iceberg); HISTORY=N profiles the batch after one of N commands
	rm -rf $(CURDIR)/.qrepl_state/bench-profile
	QREPL_STATE_DIR=$(CURDIR)/.qrepl_state/bench-profile $(PY) bench/cte_profile.py \
		$(if $(MODEL),--model $(MODEL)) $(if $(SIZE),--size $(SIZE)) $(if $(REPEAT),--repeat $(REPEAT)) \
		$(if $(AGAINST),--against $(AGAINST)) $(if $(WRITE),--write) $(if $(HISTORY),--history $(HISTORY))

bench-writes: $(STAMP)  ## what a reader run writes, the first (it creates every table) and the next batch: dbt nodes, Iceberg commits per table, rows written per queued change (CHANGES=, ROWS=); counts, not times
	rm -rf $(CURDIR)/.qrepl_state/bench-writes
	QREPL_STATE_DIR=$(CURDIR)/.qrepl_state/bench-writes $(PY) bench/run_writes.py \
		$(if $(CHANGES),--changes $(CHANGES)) $(if $(ROWS),--rows $(ROWS))

bench-statements: $(STAMP) ## one warm reader run statement by statement: per dbt node its statements and their seconds, and the time outside Spark (CHANGES=, ROWS=)
	rm -rf $(CURDIR)/.qrepl_state/bench-statements
	QREPL_STATE_DIR=$(CURDIR)/.qrepl_state/bench-statements $(PY) bench/statements.py \
		$(if $(CHANGES),--changes $(CHANGES)) $(if $(ROWS),--rows $(ROWS))

bench-replay: $(STAMP)  ## `qrepl replay` of 10k one-transaction enqueue steps vs the reference (TRANSACTIONS=...)
	rm -rf $(CURDIR)/.qrepl_state/bench-replay
	QREPL_STATE_DIR=$(CURDIR)/.qrepl_state/bench-replay $(PY) bench/replay_bench.py $(if $(TRANSACTIONS),--transactions $(TRANSACTIONS))

partition-check: $(STAMP) ## two subscribers with disjoint partitions, TRANSACTIONS (10000) each: zero conflicts; unpartitioned, the conflicts the reference predicts
	rm -rf $(CURDIR)/.qrepl_state/partition-check
	QREPL_STATE_DIR=$(CURDIR)/.qrepl_state/partition-check $(PY) scripts/partition_check.py \
		$(if $(TRANSACTIONS),--transactions $(TRANSACTIONS))

conformance: $(STAMP)   ## N generated workloads per policy, Spark + dbt vs the reference
	QREPL_CONFORMANCE_EXAMPLES=$(N) QREPL_CONFORMANCE_COUPLED=$(N) QREPL_SCENARIO_POLICIES=all \
		QREPL_STATE_DIR=$(CURDIR)/.qrepl_state/conformance \
		QREPL_CONFORMANCE_PACK=$(PACK) QREPL_CONFORMANCE_LOG=$(CURDIR)/.qrepl_state/conformance.log \
		$(PY) -m pytest -q python/tests/spark/test_conformance.py python/tests/spark/test_replay_spark.py

faults: $(STAMP)        ## every write point of a run, killed and failed, under every event (long: in parts on two workers, -v lists each part)
	rm -rf $(CURDIR)/.qrepl_state/faults
	QREPL_FAULT_POINTS=all QREPL_KILL_POINTS=all QREPL_SWEEP_PARTS=4 QREPL_STATE_DIR=$(CURDIR)/.qrepl_state/faults \
		$(PY) -m pytest -v -n 2 --dist load python/tests/spark/test_run_faults.py python/tests/spark/test_python_layer_faults.py \
		python/tests/e2e/test_crash_kill.py python/tests/e2e/layer_kill_check.py python/tests/spark/concurrent_captures_check.py

concurrency: $(STAMP) metastore-driver  ## separate JVMs on one PostgreSQL metastore; two captures of one subscriber at the same instant
	rm -rf $(CURDIR)/.qrepl_state/concurrency
	QREPL_STATE_DIR=$(CURDIR)/.qrepl_state/concurrency $(PY) -m pytest -q -s \
		python/tests/e2e/shared_metastore_check.py python/tests/spark/concurrent_captures_check.py

soak: $(STAMP) metastore-driver  ## a publisher job beside run, distribute, maintain, resolve, subscription add and immediate commits, separate JVMs on one PostgreSQL metastore, MINUTES (10) per policy; every job write checked row by row
	rm -rf $(CURDIR)/.qrepl_state/soak
	QREPL_SOAK_MINUTES=$(MINUTES) QREPL_STATE_DIR=$(CURDIR)/.qrepl_state/soak $(PY) -m pytest -q -s \
		python/tests/e2e/soak_check.py

lint: $(STAMP) lint-js
	$(VENV)/bin/ruff check python bench scripts
	$(VENV)/bin/ruff format --check python bench scripts
	$(VENV)/bin/sqlfluff lint models tests examples/downstream/models examples/downstream/tests  # macro files render to nothing on their own

lint-js: node_modules/.package-lock.json  ## eslint (pinned in package-lock.json) on the viewer's JavaScript
	npx --no-install eslint python/qrepl/services/viewer_assets

node_modules/.package-lock.json: package.json package-lock.json
	@command -v npm >/dev/null || { echo "qrepl: npm not found: install Node.js 20 (apt-get install nodejs npm)"; exit 1; }
	npm ci --no-audit --no-fund

clean:                  ## also the PostgreSQL directories of deploy and deploy-test (outside the checkout when run as root)
	-for d in deploy deploy-test; do QREPL_DEPLOY_DIR=$(CURDIR)/.qrepl_state/$$d bash scripts/postgres.sh destroy; done
	rm -rf .qrepl_state target logs .pytest_cache out
