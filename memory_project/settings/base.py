"""Base settings. Every integration is switched by one environment variable with a safe default.

See README.md "Configuration" for the full list.
"""

from __future__ import annotations

import math
import os
from datetime import timedelta
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from memory_project import embedded_pg

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(os.environ.get("ANAMNESIS_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)
embedded_pg.prepare_runtime_dir(BASE_DIR)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_tokens(name: str) -> int | None:
    """A whole number of tokens (at least 0), or None when the variable is unset or empty."""
    value = os.environ.get(name, "").strip()
    if not value:
        return None
    if not (value.isascii() and value.isdigit()):
        raise ImproperlyConfigured(f"{name} must be a whole number of tokens (0 or more), or unset; got {value!r}")
    return int(value)


SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "dev-only-insecure-key-change-me")
DEBUG = env_bool("DJANGO_DEBUG", False)  # on only when asked for (`DJANGO_DEBUG=1`)
ALLOWED_HOSTS = [h for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "channels",
    "axes",  # login throttling (django-axes): see AXES_* below
    "memory_project",  # the interfaces' own commands (manage.py mcp); no models
    "memories",
    "retrieval",
    "graphs",
    "dashboard",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",  # static files under uvicorn, in every mode
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks: turns a lockout into its response
]

ROOT_URLCONF = "memory_project.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]
WSGI_APPLICATION = "memory_project.wsgi.application"
ASGI_APPLICATION = "memory_project.asgi.application"

# --- Database: DATABASE_URL, else the embedded PostgreSQL 16 + pgvector under ./var/pgdata ---
DATABASE_URL = os.environ.get("DATABASE_URL", "")
EMBEDDED_PGDATA = Path(os.environ.get("ANAMNESIS_PGDATA", VAR_DIR / "pgdata"))
if DATABASE_URL:
    import dj_database_url

    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60, conn_health_checks=True)}
else:
    DATABASES = {
        "default": embedded_pg.django_database(
            EMBEDDED_PGDATA,
            autostart=env_bool("ANAMNESIS_DB_AUTOSTART", True),
            name=os.environ.get("ANAMNESIS_DB_NAME", "anamnesis"),
        )
    }
# Under ASGI a request's connection is not kept between requests (Django closes it at the end of
# each), so a web process opening one per request spends more on connecting than on some
# retrievals. The ASGI entry point turns on psycopg's connection pool (asgi.py sets
# ANAMNESIS_DB_POOL); each process keeps up to ANAMNESIS_DB_POOL_MAX_SIZE connections (the request
# thread, the retrieval pool's six threads, websocket and MCP handlers). Workers and commands keep theirs.
if env_bool("ANAMNESIS_DB_POOL", False):
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # the pool keeps them instead
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": int(os.environ.get("ANAMNESIS_DB_POOL_MIN_SIZE", "2")),
        "max_size": int(os.environ.get("ANAMNESIS_DB_POOL_MAX_SIZE", "20")),
        "timeout": float(os.environ.get("ANAMNESIS_DB_POOL_TIMEOUT", "10")),
    }

def env_number(name: str, default: str, kind, *, at_least: float = 0):
    value = os.environ.get(name, default)
    try:
        number = kind(value)
    except ValueError:
        number = None
    if number is None or not math.isfinite(number) or number < at_least:
        raise ImproperlyConfigured(f"{name} must be a {'whole ' if kind is int else ''}number of at least "
                                   f"{at_least:g}; got {value!r}")
    return number


# How many HTTP requests a web process runs in Django at once (0: no limit), and how long one waits
# for its turn before it runs without one (memory_project.asgi_guards.RequestGate; 0: never waits).
ANAMNESIS_WEB_CONCURRENCY = env_number("ANAMNESIS_WEB_CONCURRENCY", "1", int)
ANAMNESIS_WEB_QUEUE_PATIENCE = env_number("ANAMNESIS_WEB_QUEUE_PATIENCE", "2", float)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns about a missing one
# WhiteNoise serves what the finders find (admin, Swagger's sidecar, static/), so nothing needs
# `collectstatic` first; a production image may still collect into STATIC_ROOT.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG
# Password guessing at /ui/login/ and /admin/login/ is throttled by django-axes (its attempts in the
# database, so every web process sees them): after ANAMNESIS_LOGIN_FAILURE_LIMIT failed logins for
# one user name from one client address, that pair is refused (429, even with the right password)
# for ANAMNESIS_LOGIN_COOLOFF_MINUTES after the last failure. Keyed on the pair, so nobody elsewhere
# can lock a user out and colleagues behind one address do not lock each other out; a success
# clears the count; `manage.py axes_reset` unlocks everyone at once. The address is the
# connection's (uvicorn takes X-Forwarded-For only from its trusted proxies).
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = int(os.environ.get("ANAMNESIS_LOGIN_FAILURE_LIMIT", "5"))
AXES_COOLOFF_TIME = timedelta(minutes=float(os.environ.get("ANAMNESIS_LOGIN_COOLOFF_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "dashboard/locked_out.html"
LOGIN_URL = "ui:login"
LOGIN_REDIRECT_URL = "ui:overview"
LOGOUT_REDIRECT_URL = "ui:login"

# --- Celery: REDIS_URL / CELERY_BROKER_URL, else a filesystem broker under ./var/broker ---
REDIS_URL = os.environ.get("REDIS_URL", "")
BROKER_DIR = VAR_DIR / "broker"
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or REDIS_URL or "filesystem://"
if CELERY_BROKER_URL == "filesystem://":
    for sub in ("out", "processed", "control"):
        (BROKER_DIR / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "out"),
        "data_folder_out": str(BROKER_DIR / "out"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "store_processed": False,
        "control_folder": str(BROKER_DIR / "control"),  # else kombu writes ./control/
    }
CELERY_RESULT_BACKEND = None  # every job persists its own PipelineRun / WriteJob row
# A task is acknowledged when it finished, not when it arrived, and a worker that dies gives its
# task back: a crash never drops a message. The job row says who runs it: the worker holds a lease
# of ANAMNESIS_JOB_LEASE_SECONDS, renewed every third of it while it works; the sweeper below
# re-queues a running job whose lease expired (memories/services/leases.py).
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
ANAMNESIS_JOB_LEASE_SECONDS = float(os.environ.get("ANAMNESIS_JOB_LEASE_SECONDS", "60"))
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_QUEUE", "anamnesis")
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE: dict = {}
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
ANAMNESIS_JOB_MAX_SECONDS = float(os.environ.get("ANAMNESIS_JOB_MAX_SECONDS", "300"))
# Redis hands a task that was delivered but never acknowledged (its worker died) to another worker
# after the visibility timeout (Redis's own default: one hour). Default: five leases, and at least
# the longest background job plus a lease, so a task still running is not handed out twice (if it
# is, the second worker finds the job leased and tries again when the lease runs out).
ANAMNESIS_BROKER_VISIBILITY_TIMEOUT = float(os.environ.get(
    "ANAMNESIS_BROKER_VISIBILITY_TIMEOUT",
    max(5 * ANAMNESIS_JOB_LEASE_SECONDS, ANAMNESIS_JOB_MAX_SECONDS + ANAMNESIS_JOB_LEASE_SECONDS)))
if CELERY_BROKER_URL.startswith(("redis://", "rediss://", "redis+socket://")):
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": ANAMNESIS_BROKER_VISIBILITY_TIMEOUT}

# --- Channels: Redis layer when REDIS_URL is set, else in-process ---
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [REDIS_URL]}}
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# --- Providers ---
# Embeddings: "local" (bundled all-MiniLM-L6-v2) or "openai" (any OpenAI-compatible endpoint).
ANAMNESIS_EMBEDDER = os.environ.get("ANAMNESIS_EMBEDDER", "local")
ANAMNESIS_EMBEDDING_BASE_URL = os.environ.get("ANAMNESIS_EMBEDDING_BASE_URL", "")
ANAMNESIS_EMBEDDING_MODEL = os.environ.get("ANAMNESIS_EMBEDDING_MODEL", "text-embedding-3-small")
ANAMNESIS_EMBEDDING_API_KEY = os.environ.get("ANAMNESIS_EMBEDDING_API_KEY", "")
ANAMNESIS_EMBEDDING_DIMENSIONS = 384
# LLM: "none" (deterministic offline extractor) or "openai" (any OpenAI-compatible base URL).
ANAMNESIS_LLM = os.environ.get("ANAMNESIS_LLM", "openai" if os.environ.get("ANAMNESIS_LLM_BASE_URL") else "none")
ANAMNESIS_LLM_BASE_URL = os.environ.get("ANAMNESIS_LLM_BASE_URL", "")
ANAMNESIS_LLM_MODEL = os.environ.get("ANAMNESIS_LLM_MODEL", "gpt-4o-mini")
ANAMNESIS_LLM_API_KEY = os.environ.get("ANAMNESIS_LLM_API_KEY", "")
ANAMNESIS_LLM_TIMEOUT = float(os.environ.get("ANAMNESIS_LLM_TIMEOUT", "30"))
# LLM token budgets per agent (memories/budgets.py): what one agent's writes, retrievals and
# background jobs may spend per UTC day and per UTC month; unset: no limit. An agent's own budget
# (the admin's agent page, PATCH /api/v1/agents/<slug>/budget/) replaces these defaults. Past a
# budget a write takes the offline extractor, a retrieval skips the reranker, a job its LLM calls.
ANAMNESIS_LLM_BUDGET_DAY_TOKENS = env_tokens("ANAMNESIS_LLM_BUDGET_DAY_TOKENS")
ANAMNESIS_LLM_BUDGET_MONTH_TOKENS = env_tokens("ANAMNESIS_LLM_BUDGET_MONTH_TOKENS")

# Write jobs left queued (the broker was down when they were accepted), failed by infrastructure or
# running under an expired lease (their worker died) are sent again, and so are the vacuums forgets
# left pending; a background job run whose lease expired is marked failed
# (memories.services.write_jobs.jobs_sweep).
CELERY_BEAT_SCHEDULE["write-jobs-sweep"] = {
    "task": "memories.tasks.jobs_sweep_task",
    "schedule": float(os.environ.get("ANAMNESIS_JOBS_SWEEP_EVERY_SECONDS", "30")),
}
# A forget's vacuum runs in a worker after the forget's commit, never in its request
# (memories.services.erasures); 1 runs it in the forget's process, right after the commit.
ANAMNESIS_ERASURE_VACUUM_INLINE = env_bool("ANAMNESIS_ERASURE_VACUUM_INLINE", False)

# --- Retrieval ---
# BM25 posting lists kept in memory per process (16 bytes a posting; 8M ≈ 128 MB, held only as
# large agents fill it), reused until a write changes their term (retrieval/postings.py). The
# lists a million-fact agent's questions read hold about 5M postings: with less, each question
# reads its long lists from the database again.
ANAMNESIS_KEYWORD_CACHE_POSTINGS = int(os.environ.get("ANAMNESIS_KEYWORD_CACHE_POSTINGS", "8000000"))
# Entity graphs kept in memory per process, one per agent, the least recently used dropped first
# (graphs/entity_graph.py; rebuilt when the agent's graph_version moves).
ANAMNESIS_GRAPH_CACHE_AGENTS = int(os.environ.get("ANAMNESIS_GRAPH_CACHE_AGENTS", "64"))
# Vectors of agents small enough to be measured exactly (at most `exact_scan_max_rows` documents
# of a kind), held per process so the exact measure is a matrix product rather than a read of
# every row (retrieval/vector_cache.py; 1.5 kB a document with the bundled model). 0: off.
ANAMNESIS_VECTOR_CACHE_MB = env_number("ANAMNESIS_VECTOR_CACHE_MB", "256", float)
# A time-travel query checks only the rows of the edges an agent's graph ever had near its
# entities, from a history graph cached per agent; after a write it is rebuilt in the background
# at most this often per agent and process (meanwhile such queries read the database).
ANAMNESIS_HISTORY_GRAPH_MIN_INTERVAL = float(os.environ.get("ANAMNESIS_HISTORY_GRAPH_MIN_INTERVAL", "30"))
# (agent, kind) pairs whose observed share of the shared HNSW index each process remembers
# (retrieval/signals.py: semantic), the least recently searched dropped first.
ANAMNESIS_OBSERVED_SHARE_CACHE_SIZE = int(os.environ.get("ANAMNESIS_OBSERVED_SHARE_CACHE_SIZE", "10000"))

# Agents with at least this many facts (or events) get HNSW indexes of their own
# (retrieval/vector_indexes.py), built by the beat job below or `manage.py agent_indexes`.
ANAMNESIS_AGENT_INDEX_MIN_ROWS = int(os.environ.get("ANAMNESIS_AGENT_INDEX_MIN_ROWS", "5000"))
# memory for one HNSW build (PostgreSQL's maintenance_work_mem): a build whose graph does not fit
# goes on disk and takes many times longer; about 2.5 kB per 384-dimension row fits (4GB: a million)
ANAMNESIS_INDEX_BUILD_MEMORY = os.environ.get("ANAMNESIS_INDEX_BUILD_MEMORY", "512MB")

# --- Background jobs (memories/jobs/; `manage.py jobs list|run NAME`) ---
# Each runs on beat every ANAMNESIS_JOB_<NAME>_EVERY_SECONDS unless ANAMNESIS_JOB_<NAME>_ENABLED=0
# (ANAMNESIS_JOBS_ENABLED=0 switches them all off), as a traced run bounded by ANAMNESIS_JOB_MAX_SECONDS.
ANAMNESIS_JOBS_ENABLED = env_bool("ANAMNESIS_JOBS_ENABLED", True)
_JOB_EVERY = {
    "vector_indexes": float(os.environ.get("ANAMNESIS_AGENT_INDEX_EVERY_SECONDS", "600")),
    "consolidate_profiles": 3600, "dedupe_facts": 3600, "importance": 6 * 3600, "decay": 24 * 3600,
    "merge_suggestions": 6 * 3600, "graph_warmup": 300,
}
ANAMNESIS_JOBS = {
    name: {"enabled": env_bool(f"ANAMNESIS_JOB_{name.upper()}_ENABLED", True),
           "every": float(os.environ.get(f"ANAMNESIS_JOB_{name.upper()}_EVERY_SECONDS", every))}
    for name, every in _JOB_EVERY.items()
}
if ANAMNESIS_JOBS_ENABLED:
    for _name, _job in ANAMNESIS_JOBS.items():
        if _job["enabled"]:
            CELERY_BEAT_SCHEDULE[f"job-{_name}"] = {"task": "anamnesis.jobs.run", "schedule": _job["every"],
                                                     "args": [_name]}
ANAMNESIS_DECAY_HALF_LIFE_DAYS = float(os.environ.get("ANAMNESIS_DECAY_HALF_LIFE_DAYS", "90"))
ANAMNESIS_DECAY_FLOOR = float(os.environ.get("ANAMNESIS_DECAY_FLOOR", "0.3"))
ANAMNESIS_MERGE_SUGGESTION_MIN_SCORE = float(os.environ.get("ANAMNESIS_MERGE_SUGGESTION_MIN_SCORE", "0.55"))
# merge a suggested pair without an operator only when this is on AND the LLM confirms it
ANAMNESIS_AUTO_MERGE = env_bool("ANAMNESIS_AUTO_MERGE", False)
# graph_warmup rebuilds the entity graphs of agents written to or read in this many seconds
ANAMNESIS_GRAPH_WARMUP_ACTIVE_SECONDS = float(os.environ.get("ANAMNESIS_GRAPH_WARMUP_ACTIVE_SECONDS", "3600"))
# /metrics (Prometheus): sessions with a UI role and all-agents admin keys only, unless this is on
ANAMNESIS_METRICS_PUBLIC = env_bool("ANAMNESIS_METRICS_PUBLIC", False)

# --- REST API (/api/v1/): API keys (`manage.py create_api_key`) or a session with a UI role ---
# Request bodies above this are a 413 (the API checks Content-Length before reading).
DATA_UPLOAD_MAX_MEMORY_SIZE = 256 * 1024
# ... except an agent import (POST agents/{agent}/import/: an export file, read line by line from
# a temporary file, never whole in memory), which must send its Content-Length and stay under this.
ANAMNESIS_IMPORT_MAX_BYTES = int(os.environ.get("ANAMNESIS_IMPORT_MAX_BYTES", str(1024**3)))
REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "memory_project.api.errors.exception_handler",
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "memories.api.auth.BearerKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["memories.api.auth.HasScope"],
    "DEFAULT_PARSER_CLASSES": ["memory_project.api.parsers.SafeJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PAGINATION_CLASS": "memory_project.api.pagination.IdCursorPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_THROTTLE_CLASSES": ["memory_project.api.throttling.PrincipalRateThrottle"],
    # per API key (or logged-in user); ANAMNESIS_API_RATE e.g. "600/min", "20/sec"
    "DEFAULT_THROTTLE_RATES": {
        "api": os.environ.get("ANAMNESIS_API_RATE", "1200/min"),
        # per client address: /health/ and requests with an invalid key
        "anon": os.environ.get("ANAMNESIS_ANON_RATE", "120/min"),
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Anamnesis API",
    "DESCRIPTION": "Long-term memory for AI agents. Authenticate with `Authorization: Bearer <key>`.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI served from the installed package, not a CDN: the docs work offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "ENUM_NAME_OVERRIDES": {"RunStatusEnum": "memories.models.RunStatus", "HealthStatusEnum": ["ok", "unavailable"]},
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "memory_project.api.schema.add_error_responses",
    ],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "pgserver": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
        "sentence_transformers": {"level": "WARNING"},
        "axes": {"level": "WARNING"},  # lockouts (warnings) stay; not its start-up banner or every attempt
    },
}
