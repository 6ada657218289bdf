# The two commands: `make run` and `make test`. Both set everything up on a fresh machine.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PORT ?= 8000

.PHONY: install run test lint typecheck pytest bench stop-db clean-db lock

$(STAMP): pyproject.toml requirements.lock
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) on PATH"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c requirements.lock -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

## Start the product: embedded Postgres, migrations, demo workspace, web + worker + beat. Ctrl-C stops all.
run: install
	$(BIN)/python manage.py run_hub --port $(PORT)

## The whole suite: lint, types, migration check, tests (browser tests included).
test: install lint typecheck pytest

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy

pytest: install
	$(BIN)/python manage.py makemigrations --check --dry-run
	$(BIN)/pytest

bench: install
	$(BIN)/python bench/commit.py

stop-db: install
	$(BIN)/python manage.py stop_db

## Regenerate the lock after changing dependencies in pyproject.toml.
lock: install
	$(BIN)/python -m pip freeze --exclude-editable | grep -v '^memoryhub' > requirements.lock
