# Anamnesis — `make run` serves the product, `make test` runs the tests.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install run serve worker beat migrate demo test lint bench bench-jobs eval-stories stop-db vendor clean reliability

$(VENV)/.installed: pyproject.toml clients/python/pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e ".[dev]"
	$(PY) -m pip install --quiet -e clients/python  # the Python client (README "Python client")
	touch $@

install: $(VENV)/.installed

migrate: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py agent_indexes

demo: migrate
	$(PY) manage.py load_demo

# Web (ASGI, uvicorn), one Celery worker and beat; Ctrl-C stops all three and make exits quietly.
# Not `trap 'kill 0'`: kill 0 signals the recipe's own shell too, whose trap then runs again and
# again until bash overflows its stack (the "Segmentation fault" make used to report), and make
# itself gets the TERM. The trap below stops only the three children, once (TERM, then KILL for
# any still there after 15 s), and waits for them.
run: demo
	@echo "Anamnesis UI: http://127.0.0.1:$(PORT)/ui/  (login admin / anamnesis-demo; API docs /api/v1/docs/, admin /admin/). Ctrl-C stops it."
	@pids=""; \
	stop() { trap - INT TERM EXIT; kill $$pids 2>/dev/null; \
	  for _ in $$(seq 30); do kill -0 $$pids 2>/dev/null || break; sleep 0.5; done; \
	  kill -KILL $$pids 2>/dev/null; wait; exit $${1:-0}; }; \
	trap 'stop 0' INT TERM; trap 'stop $$?' EXIT; \
	$(VENV)/bin/celery -A memory_project worker --loglevel=INFO --concurrency=1 & pids="$$pids $$!"; \
	$(VENV)/bin/celery -A memory_project beat --loglevel=INFO & pids="$$pids $$!"; \
	$(VENV)/bin/uvicorn memory_project.asgi:application --host 127.0.0.1 --port $(PORT) & pids="$$pids $$!"; \
	wait -n; stop $$?

test: install
	$(PY) -m pytest $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing"; exit 1; fi; exit $$rc

lint: install
	$(VENV)/bin/ruff check .
	$(PY) manage.py makemigrations --check --dry-run
	$(VENV)/bin/lint-imports

bench: migrate
	$(PY) bench/write_throughput.py
	$(PY) bench/retrieve_latency.py

# Write throughput and retrieve latency on one 20k-fact agent, without and with the background
# jobs running in a loop in another process (BENCH_JOBS_ARGS="--facts 100000 --rounds 3").
bench-jobs: migrate
	$(PY) bench/jobs_under_load.py $(BENCH_JOBS_ARGS)

# Forget, lost writes, strict input, safe defaults and measured faults (500 writes under kill -9,
# database restart, broker down, LLM faults) → docs/RELIABILITY.md
reliability: install
	$(PY) bench/reliability.py $(RELIABILITY_ARGS)

# Story benchmark (memory-state accuracy): server + worker on STORIES_PORT, the shared scorer on the dev file.
eval-stories: install
	$(PY) bench/stories.py $(STORIES_ARGS)

vendor:
	python3 scripts/vendor.py

stop-db:
	$(PY) manage.py embedded_db stop

clean: stop-db
	rm -rf var
