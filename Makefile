# The README's two commands: `make demo` and `make test`. Each sets itself up, saying what it does.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# the providers the test suite runs against (their jars come from Maven Central, once)
TEST_PROVIDERS ?= activemq artemis amqp

.PHONY: demo test bench soak providers clean

$(VENV)/.installed: pyproject.toml setup.py
	@echo "==> creating $(VENV) and installing pyjms with its test and Spark extras (pip, a few minutes the first time)"
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,spark]'
	touch $@

# resolving is cached (~/.cache/pyjms, ~/.m2): later runs neither start Maven nor use the network
providers: $(VENV)/.installed
	@echo "==> resolving Java providers from Maven Central: $(TEST_PROVIDERS)"
	$(PY) -m pyjms providers fetch $(TEST_PROVIDERS)

demo: $(VENV)/.installed
	$(PY) -m pyjms providers fetch activemq
	$(PY) examples/demo.py

test: providers
	@echo "==> running the test suite against real brokers"
	$(PY) -m pytest -q

bench: providers
	$(PY) bench/run_all.py

# the long fault runs, never part of `make test`: broker SIGKILLs under delayed load, a table of
# sent, received, lost, duplicated, early, stranded per run (`pytest -m soak` asserts the same)
soak: providers
	@echo "==> soak: 10 runs of 5,000 delayed messages, one broker SIGKILL each (about 10-15 minutes)"
	$(PY) bench/soak_delay_recovery.py --runs 10 --messages 5000 --window-s 10

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
