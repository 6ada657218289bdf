"""Settings for the test suite: the production settings with a separate broker.

Tests run on the same embedded PostgreSQL as `make run` (pytest-django creates
``test_memoryhub``); the Celery queue lives in its own database so a running
`make run` worker never consumes a test's tasks.
"""

from __future__ import annotations

from memoryhub.settings import *  # noqa: F403
from memoryhub.settings import DATABASE_URL, broker_url_on_database, env_bool, env_str

BROKER_DATABASE_NAME = "memoryhub_broker_test"
if not env_str("CELERY_BROKER_URL"):
    if not DATABASE_URL:
        from memoryhub.embedded_db import ensure_database, ensure_server
        from memoryhub.settings import PGDATA_DIR

        ensure_database(ensure_server(PGDATA_DIR), BROKER_DATABASE_NAME)
    CELERY_BROKER_URL = broker_url_on_database(BROKER_DATABASE_NAME)

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# No model loading in a background thread of the test process (importing memoryhub.asgi would start one):
# numpy reads an .npy header with ast.literal_eval, and CPython 3.11.7 keeps one AST recursion counter per
# interpreter, so that thread's parse racing pytest's assertion rewriting failed collection with
# "SystemError: AST constructor recursion depth mismatch". Tests load models on first use, or call warm().
MEMORYHUB_WARM_MODELS = env_bool("MEMORYHUB_WARM_MODELS", False)
