# The two commands a newcomer needs: `make demo` and `make test`. Both build everything from scratch.
PYTHON ?= python3
# Compiled bytecode matters here: the generated protocol modules are large.
unexport PYTHONDONTWRITEBYTECODE
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-lane-spark test-lane-main test-lane-py313 test-lane-pure test-fast bench lint typecheck generate docs clean sysdeps venv venv313

EXT_SOURCES := $(shell find aiokafka_lite -name '*.pyx' -o -name '*.pxi' -o -name '*.pxd')

$(STAMP): pyproject.toml setup.py $(EXT_SOURCES)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip setuptools wheel
	command -v krb5-config >/dev/null 2>&1 || bash scripts/sysdeps.sh  # the gssapi package builds against libkrb5-dev
	# compat mode: a plain .pth path, so type checkers (mypy, pyright) see the package, not only the interpreter
	$(PY) -m pip install -q -e '.[dev,speed,spark,gssapi,prometheus,otel,oauth]' --config-settings editable_mode=compat
	touch $(STAMP)

venv: $(STAMP)

# A second interpreter in CI: Python 3.13 from pyenv (the newest we support; 3.11 is the oldest). Its venv
# holds what the event-loop and hot-path tests need (no Spark: the Spark bridge is tested on 3.11).
PYENV_ROOT ?= $(HOME)/.pyenv
PYTHON313 ?= $(firstword $(wildcard $(PYENV_ROOT)/versions/3.13*/bin/python3.13) $(shell command -v python3.13))
VENV313 ?= .venv313
PY313 := $(VENV313)/bin/python
STAMP313 := $(VENV313)/.installed

$(STAMP313): pyproject.toml setup.py $(EXT_SOURCES)
	@test -n "$(PYTHON313)" || { echo "no Python 3.13 (pyenv install 3.13.0, or make PYTHON313=...)"; exit 1; }
	$(PYTHON313) -m venv $(VENV313)
	$(PY313) -m pip install -q --upgrade pip setuptools wheel
	command -v krb5-config >/dev/null 2>&1 || bash scripts/sysdeps.sh
	$(LOW) $(PY313) -m pip install -q -e '.[dev,speed,gssapi,prometheus,otel,oauth]' --config-settings editable_mode=compat
	touch $(STAMP313)

venv313: $(STAMP313)

sysdeps:
	bash scripts/sysdeps.sh

demo: $(STAMP)
	$(PY) -m aiokafka_lite.demo

# Four lanes side by side; all but spark spread their tests over TEST_WORKERS pytest-xdist workers (the suite
# waits on brokers, timeouts and child processes more than it computes, so more workers than cores pay; every
# worker starts its own brokers and mock clusters, each on a free port of its own):
# * main: the whole suite on asyncio's own loop under Python 3.11, but for SPARK_TESTS;
# * spark: SPARK_TESTS under Python 3.11, in one process, at normal CPU priority (see SPARK_TESTS);
# * py313: builds the Python 3.13 venv (beside the 3.11 one), then every test that runs an event
#   loop again on uvloop under Python 3.13 with the compiled hot path built for it, and the records tests;
# * pure: the hot-path tests on the pure-Python twin, then the sample application's own suite
#   (examples/orders_app: the testing kit's fixtures come from the installed entry point, as a user's do).
# Each lane's output is printed whole when it ends (-O). TEST_JOBS=1 runs the lanes one after the other;
# TEST_WORKERS=0 runs each pytest in one process (no xdist).
UVLOOP_TESTS := tests/net tests/producer tests/consumer tests/admin tests/contract tests/cli tests/metrics tests/test_embedded.py tests/test_mockcluster.py
# On 3.13 too: the compiled records core.
PY313_TESTS := $(UVLOOP_TESTS) tests/records

# The pure-Python twin of the compiled hot path (records, the send() fast path, handles) runs the tests that
# exercise it, so both builds stay correct (the twin tests also hold them byte-identical).
PURE_TESTS := tests/records tests/producer tests/consumer

# What runs Spark (local sessions, a standalone cluster, Spark Connect, the docs' Spark examples) has a lane of
# its own, in one process, from the start: a streaming query's Python runner must connect back to the JVM
# within 10 s, a bound fixed in Spark, and beside the other lanes' workers at equal priority it sometimes did
# not ("Python worker failed to connect back", DEVELOPERS.md). So the other lanes run under `nice` (LOW): they
# take the CPU the Spark lane leaves, and the Spark lane's JVMs and Python runners are never starved by them.
# tests/spark/conf stops the Spark JVMs' JIT at C1, which leaves them less CPU to take.
SPARK_TESTS := tests/spark tests/test_docs_blocks.py
LOW ?= nice -n 5

TEST_JOBS ?= 4
TEST_WORKERS ?= 5
# --dist loadgroup: tests are handed out one by one, but a module sharing a module-scoped fixture (a Spark
# session, a TLS or SASL front) stays on one worker (tests/conftest.py groups it).
XDIST := $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadgroup)
PYTEST := -m pytest -q -p no:cacheprovider $(XDIST)

# Each lane builds the venv it needs: on a fresh clone the two venvs are built at once (setup.py lets one
# build at a time generate and compile the extension), and the 3.13 one is not waited for by the others.
test: sysdeps
	$(MAKE) --no-print-directory -j$(TEST_JOBS) -O test-lane-spark test-lane-main test-lane-py313 test-lane-pure

test-lane-spark: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider $(SPARK_TESTS)

test-lane-main: $(STAMP)
	$(LOW) $(PY) $(PYTEST) $(addprefix --ignore=,$(SPARK_TESTS))

test-lane-py313: $(STAMP313)
	AIOKAFKA_LITE_LOOP=uvloop $(LOW) $(PY313) $(PYTEST) $(PY313_TESTS)

test-lane-pure: $(STAMP)
	AIOKAFKA_LITE_PURE=1 $(LOW) $(PY) $(PYTEST) $(PURE_TESTS)
	$(LOW) $(PY) -m pytest -q -p no:cacheprovider examples/orders_app

test-fast: $(STAMP)
	$(PY) -m pytest -q -x -m "not slow"

bench: $(STAMP)
	$(PY) bench/run_all.py

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy aiokafka_lite

# Regenerate the protocol codecs from Kafka's specs in ../shared (kept in specs/ too, so any clone can test).
generate: $(STAMP)
	if [ -d ../shared/kafka-protocol ]; then rm -rf specs/kafka-protocol && cp -r ../shared/kafka-protocol specs/; fi
	$(PY) tools/gen_protocol.py specs/kafka-protocol

docs: $(STAMP)
	$(PY) tools/gen_config_docs.py
	$(PY) tools/gen_settings_types.py

clean:
	rm -rf $(VENV) $(VENV313) build *.egg-info
