# The two commands: `make run` and `make test`. Both set everything up on a fresh machine.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
# What the running product needs (`make run`), and that plus the training stack and the tools (`make test`).
RUNTIME := $(VENV)/.installed-runtime
DEV := $(VENV)/.installed-dev
PORT ?= 8000

.PHONY: install install-dev run test lint typecheck pytest bench eval-detection eval-story-pairs stop-db lock screenshots

$(VENV)/bin/python:
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) on PATH"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(RUNTIME): pyproject.toml requirements.lock | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -c requirements.lock -e .
	touch $(RUNTIME)

$(DEV): pyproject.toml requirements.lock clients/python/pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet -c requirements.lock -e ".[dev]"
	# The Python client (clients/python), for its tests and bench/client_batch.py; the product never imports it.
	$(BIN)/python -m pip install --quiet -c requirements.lock -e ./clients/python
	touch $(RUNTIME) $(DEV)

install: $(RUNTIME)
install-dev: $(DEV)

## Start the product: embedded Postgres, migrations, demo workspace, web + worker + beat. Ctrl-C stops all.
run: install
	$(BIN)/python manage.py run_hub --port $(PORT)

## The whole suite: lint, types, migration check, tests (browser tests included).
test: install-dev lint typecheck pytest

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install-dev
	$(BIN)/mypy

pytest: install-dev
	$(BIN)/python manage.py makemigrations --check --dry-run
	$(BIN)/pytest

bench: install
	$(BIN)/python bench/commit.py

# The shared evaluation data (shared/eval here, or beside the checkout as in CI).
SHARED_EVAL ?= $(firstword $(wildcard shared/eval ../shared/eval))
## Every figure issue 21's bar reads, summary lines only (validation sets are read as aggregates; 10–15 minutes on 2 cores).
STORY_SETS := $(SHARED_EVAL)/stories-dev.jsonl $(addprefix training/data/,stories-own-dev.jsonl \
	stories-own-validation.jsonl stories-fresh-dev.jsonl stories-fresh-dev-2.jsonl stories-fresh-dev-3.jsonl \
	stories-fresh-dev-4.jsonl stories-fresh-dev-5.jsonl stories-fresh-dev-6.jsonl stories-fresh-dev-7.jsonl \
	stories-fresh-dev-8.jsonl stories-fresh-dev-9.jsonl stories-fresh-validation.jsonl \
	stories-fresh-validation-2.jsonl stories-fresh-validation-3.jsonl stories-fresh-validation-4.jsonl \
	stories-fresh-validation-5.jsonl stories-fresh-validation-6.jsonl stories-fresh-validation-7.jsonl)
PROBE_SETS := $(addprefix training/data/probes-,dev.jsonl fresh-dev.jsonl validation.jsonl fresh-validation.jsonl \
	changes.jsonl changes-validation.jsonl harmless.jsonl reasons.jsonl)
eval-detection: install-dev
	@# Each command's output goes through a file, so that a failing command stops the target (no pipefail in sh).
	@out=$$(mktemp); trap 'rm -f $$out' EXIT; \
	for f in $(STORY_SETS); do echo "== $$f"; $(BIN)/python manage.py eval_stories $$f >$$out || exit 1; \
		grep -v '^ *$$' $$out; done; \
	for f in $(PROBE_SETS); do echo "== $$f"; $(BIN)/python manage.py eval_probes $$f >$$out || exit 1; \
		sed -n '1,3p' $$out; done
	@echo "== eval_chat --split validation"; $(BIN)/python manage.py eval_chat --split validation
	@for f in chat-fresh-dev.txt chat-fresh-validation.txt chat-fresh-validation-2.txt; do \
		echo "== eval_chat, training/data/$$f"; \
		$(BIN)/python manage.py eval_chat --own training/data/$$f --no-decode || exit 1; done

## The story files' clear subjects as probe pairs, each replayed alone with its agents (training/story_pairs.py):
## updates caught, and facts of another subject or later facts that retired one (about 7 minutes on 2 cores).
eval-story-pairs: install-dev
	@out=$$(mktemp); trap 'rm -f $$out' EXIT; \
	for f in $(STORY_SETS); do echo "== $$f"; $(BIN)/python manage.py eval_probes --stories $$f >$$out || exit 1; \
		grep -v ' superseded [0-9]' $$out; done

## Regenerate docs/screenshots/ from the demo history (real chromium; 4–7 minutes on a loaded 2-core machine).
screenshots: install-dev
	MEMORYHUB_SCREENSHOTS=1 $(BIN)/pytest tests/browser/test_screenshots.py -q

stop-db: install
	$(BIN)/python manage.py stop_db

## Regenerate the lock after changing dependencies in pyproject.toml (from the dev install: it pins everything).
lock: install-dev
	$(BIN)/python -m pip freeze --exclude-editable | grep -v '^memoryhub' > requirements.lock
