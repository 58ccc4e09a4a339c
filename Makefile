# The two commands a newcomer needs: `make demo` and `make test`. Both build everything from scratch.
PYTHON ?= python3
# Compiled bytecode matters here: the generated protocol modules are large.
unexport PYTHONDONTWRITEBYTECODE
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast bench lint typecheck generate docs clean sysdeps

EXT_SOURCES := $(shell find aiokafka_lite -name '*.pyx' -o -name '*.pxi' -o -name '*.pxd')

$(STAMP): pyproject.toml setup.py $(EXT_SOURCES)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip setuptools wheel
	command -v krb5-config >/dev/null 2>&1 || bash scripts/sysdeps.sh  # the gssapi package builds against libkrb5-dev
	# compat mode: a plain .pth path, so type checkers (mypy, pyright) see the package, not only the interpreter
	$(PY) -m pip install -q -e '.[dev,speed,spark,gssapi,prometheus,otel,oauth]' --config-settings editable_mode=compat
	touch $(STAMP)

venv: $(STAMP)

sysdeps:
	bash scripts/sysdeps.sh

demo: $(STAMP)
	$(PY) -m aiokafka_lite.demo

# The whole suite on asyncio's own loop, then every test that runs an event loop again on uvloop, then the
# hot-path tests on the pure-Python twin.
UVLOOP_TESTS := tests/net tests/producer tests/consumer tests/admin tests/contract tests/cli tests/metrics tests/test_embedded.py tests/test_mockcluster.py

# The pure-Python twin of the compiled hot path (records, the send() fast path, handles) runs the tests that
# exercise it, so both builds stay correct (the twin tests also hold them byte-identical).
PURE_TESTS := tests/records tests/producer tests/consumer

test: sysdeps $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider
	AIOKAFKA_LITE_LOOP=uvloop $(PY) -m pytest -q -p no:cacheprovider $(UVLOOP_TESTS)
	AIOKAFKA_LITE_PURE=1 $(PY) -m pytest -q -p no:cacheprovider $(PURE_TESTS)

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
	rm -rf $(VENV) build *.egg-info
