# The README's two commands: `make demo` and `make test`. Each sets itself up, saying what it does.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# the providers the test suite runs against (their jars come from Maven Central, once)
TEST_PROVIDERS ?= activemq artemis amqp
# pip shows what it downloads and installs (no -q): the first run is not a silent minute
PIP := $(PY) -m pip --disable-pip-version-check

.PHONY: demo test check bench soak providers lock clean

# what the demo needs: pyjms and JPype, nothing else
$(VENV)/.demo-installed: pyproject.toml setup.py
	@echo "==> creating $(VENV) and installing pyjms with JPype (what the demo needs)"
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -e .
	touch $@

# what the tests need besides: the test tools and Spark's data source (several hundred MB, once)
$(VENV)/.installed: $(VENV)/.demo-installed
	@echo "==> installing the test tools, the Spark and OpenTelemetry extras (pytest, pyspark, pandas, pyarrow, opentelemetry...): a few minutes the first time"
	$(PIP) install -e '.[test,spark,otel]'
	touch $@

# downloads by pyjms/bridge/jars.lock.json, sha256-checked and cached (~/.cache/pyjms): no Maven;
# later runs make no network calls
providers: $(VENV)/.installed
	@echo "==> downloading Java providers' jars from Maven Central (by pyjms's lock): $(TEST_PROVIDERS)"
	$(PY) -m pyjms providers fetch $(TEST_PROVIDERS)

# for maintainers, after java/pom.xml changes: Maven resolves each provider's profile and rewrites
# the lock (coordinates, sizes, sha256) that pyjms downloads by; needs Maven, not the venv
lock:
	@echo "==> resolving java/pom.xml with Maven into pyjms/bridge/jars.lock.json (a minute or two)"
	$(PYTHON) pyjms/bridge/maven.py lock

demo: $(VENV)/.demo-installed
	@echo "==> downloading ActiveMQ's jars from Maven Central (once; cached in ~/.cache/pyjms)"
	$(PY) -m pyjms providers fetch activemq
	@echo "==> running examples/demo.py"
	$(PY) examples/demo.py

# lint, format and strict typing (seconds); `make test` runs it first, so CI does too
check: $(VENV)/.installed
	@echo "==> ruff: lint and format"
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	@echo "==> mypy --strict (pyproject.toml [tool.mypy])"
	$(PY) -m mypy

# two workers (pytest-xdist), one per core: the suite is CPU-bound (so its JVMs compile with C1
# only, tests/conftest.py); four workers took as long as two (34:34 each), and three as long as two
# (27:54 against 28:05, with the CPU 95% busy over the three-worker run). --dist loadfile keeps
# each file on one worker, so a file's module fixtures (its brokers, a Spark session) start
# once; each worker has its own session brokers and JVM.
# --no-loadscope-reorder: files are handed out in collection order, where tests/conftest.py puts
# the slowest first (SLOWEST_FILES); xdist's own order (most tests first) left a long file to start
# late, one worker running it alone at the end.
# A single file run by hand (`pytest tests/x.py`) stays in one process. --durations: the slowest
# tests, in the log CI keeps (its runs took longer than ours: 35:51 against 24:56)
TEST_WORKERS ?= 2

test: providers check
	@echo "==> running the test suite against real brokers, in $(TEST_WORKERS) workers"
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=15

bench: providers
	$(PY) bench/run_all.py

# the long fault runs, never part of `make test`: broker SIGKILLs under delayed load, a table of
# sent, received, lost, duplicated, early, stranded per run (`pytest -m soak` asserts the same);
# then SIGKILLs of the active delay processor and mark service, with their takeover times
soak: providers
	@echo "==> soak: 10 runs of 10,000 delayed messages over 30 s, one broker SIGKILL each (10 minutes or more)"
	$(PY) bench/soak_delay_recovery.py --runs 10 --messages 10000 --window-s 30
	@echo "==> soak: 10 SIGKILLs of the active delay processor and of the active mark service, each on ActiveMQ and Artemis, under delayed load"
	$(PY) bench/bench_takeover.py --kills 10

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
