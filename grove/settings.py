"""Grove's settings: one file, driven by environment variables with safe defaults."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent


def env(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    return env(name, str(default)).strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    return int(env(name, str(default)))


def env_float(name: str, default: float) -> float:
    return float(env(name, str(default)))


def env_optional_float(name: str) -> float | None:
    value = env(name).strip()
    return float(value) if value else None


DATA_DIR = Path(env("GROVE_DATA_DIR", str(BASE_DIR / "var"))).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)


def _secret_key() -> str:
    """Generated on first run and kept in the data directory, so sessions survive restarts."""
    if key := env("GROVE_SECRET_KEY"):
        return key
    path = DATA_DIR / "secret_key"
    if not path.exists():
        # O_EXCL: two processes starting together (web + worker) must agree on one key.
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_urlsafe(50))
    return path.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = env_bool("GROVE_DEBUG", False)
GROVE_HOST = env("GROVE_HOST", "127.0.0.1")
GROVE_PORT = env_int("GROVE_PORT", 8000)
# Django's test setup adds "testserver" for the test client; nothing else needs it.
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",  # naturaltime: "which you rooted a minute ago"
    "django_htmx",
    "django_q",
    "memory",
    "review",
    "dashboard",
    "agents",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    # Before any view reads a field: NUL and lone surrogates answer 400 (dashboard/screen.py).
    "dashboard.screen.ScreenInputMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]
# Only this origin: no inline script or style (scripts are static files, colours are classes or
# SVG attributes), no frames of us, forms post only here. htmx is served from our static files.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
    "object-src": [CSP.NONE],
}

ROOT_URLCONF = "grove.urls"
WSGI_APPLICATION = "grove.wsgi.application"

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
            ],
        },
    }
]

DATABASES = {
    "default": {
        "ENGINE": "grove.sqlite",
        "NAME": env("GROVE_DB_PATH", str(DATA_DIR / "grove.sqlite3")),
        "OPTIONS": {
            # BEGIN IMMEDIATE takes the write lock up front, so a transaction never
            # fails half-way on lock upgrade while the worker writes.
            "transaction_mode": "IMMEDIATE",
            # Seconds a connection waits for another's write lock (sqlite3's busy timeout; no
            # busy_timeout PRAGMA below, which would override it).
            "timeout": env_int("GROVE_DB_TIMEOUT", 20),
            "init_command": (
                "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"
            ),
        },
        "TEST": {"NAME": env("GROVE_TEST_DB_PATH", str(DATA_DIR / "test_grove.sqlite3"))},
    }
}
# GROVE_DATABASE_URL selects PostgreSQL instead (README, "Grove for a household or a team").
# dj-database-url turns the URL into Django's dict: Django itself has no URL parser, and
# this one is small, kept (jazzband), percent-decodes credentials and passes ?host=/socket
# and other query keys to psycopg as OPTIONS.
if DATABASE_URL := env("GROVE_DATABASE_URL"):
    import dj_database_url

    _pg: dict[str, Any] = {
        **dj_database_url.parse(DATABASE_URL, conn_max_age=60, conn_health_checks=True)
    }
    if _pg["ENGINE"] != "django.db.backends.postgresql":
        raise ImproperlyConfigured("GROVE_DATABASE_URL must be a postgres:// URL (psycopg 3).")
    _pg["ENGINE"] = "grove.postgresql"  # Django's, plus the test flush (grove/postgresql)
    DATABASES = {"default": _pg}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "overview"
LOGOUT_REDIRECT_URL = "login"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
# The one-time login link lives as long as Django's password-reset tokens.
PASSWORD_RESET_TIMEOUT = env_int("GROVE_LOGIN_LINK_SECONDS", 24 * 3600)

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = DATA_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)  # whitenoise warns when it is missing
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("GROVE_LOG_LEVEL", "WARNING")},
}

# django-q2 on the ORM broker: the queue lives in the same database (SQLite or PostgreSQL).
Q_CLUSTER = {
    "name": "grove",
    "orm": "default",
    "workers": env_int("GROVE_WORKERS", 1),
    "timeout": env_int("GROVE_TASK_TIMEOUT", 1800),
    "retry": env_int("GROVE_TASK_TIMEOUT", 1800) + 60,
    "max_attempts": 1,
    "poll": 0.5,
    "catch_up": False,
    "save_limit": 500,
    "sync": env_bool("GROVE_Q_SYNC", False),
    "label": "Worker",
}

# --- Grove's own knobs -------------------------------------------------------------------
GROVE_MAX_BODY_CHARS = env_int("GROVE_MAX_BODY_CHARS", 100_000)
# source and signature travel in every recall packet: long enough for a URL or a path#section.
GROVE_MAX_SOURCE_CHARS = env_int("GROVE_MAX_SOURCE_CHARS", 2000)
GROVE_MAX_SIGNATURE_CHARS = env_int("GROVE_MAX_SIGNATURE_CHARS", 200)
# Importers refuse a file over this size before reading it (a per-file error in the summary).
GROVE_MAX_IMPORT_BYTES = env_int("GROVE_MAX_IMPORT_BYTES", 64_000_000)
# One line of a coding agent's session file (a tool's whole output can be megabytes): a longer
# line is refused alone, named in the summary, and the rest of the file comes in.
GROVE_MAX_SESSION_LINE_BYTES = env_int("GROVE_MAX_SESSION_LINE_BYTES", 1_000_000)
# Folders of agents' sessions that watch scans, every GROVE_WATCH_SECONDS (empty: none), e.g.
# "claude-code:~/.claude/projects,codex:~/.codex/sessions".
GROVE_WATCH = env("GROVE_WATCH", "")
GROVE_WATCH_SECONDS = env_int("GROVE_WATCH_SECONDS", 180)
GROVE_WATCH_TOOLS = env("GROVE_WATCH_TOOLS", "lines")  # tool calls as labelled lines, or "skip"
GROVE_MAX_REQUEST_BYTES = env_int("GROVE_MAX_REQUEST_BYTES", 1_000_000)
DATA_UPLOAD_MAX_MEMORY_SIZE = GROVE_MAX_REQUEST_BYTES
GROVE_SCROLL_DIR = Path(env("GROVE_SCROLL_DIR", str(DATA_DIR / "scroll")))
# Where each verified chain checkpoint is also appended, outside the database (memory/chain.py):
# someone who rewrites the file and recomputes every hash still disagrees with this.
GROVE_CHAIN_ANCHOR = Path(env("GROVE_CHAIN_ANCHOR", str(DATA_DIR / "chain-anchor.jsonl")))
# Younger than this (store clock) a node is a root. 150 from bench/forgetting_bench.py: the best
# net recall@10 among thresholds leaving at most 60% of a year's arrivals live.
GROVE_DECAY_MIN_AGE_DAYS = env_int("GROVE_DECAY_MIN_AGE_DAYS", 150)
# The guard on mass forgetting (memory/sleep/decay.py): a sleep that would let go of more than
# this share of the live graph lets go of none of it until the owner releases it; quiet while
# fewer than GROVE_DECAY_GUARD_FLOOR nodes are live (a small memory's first weeks).
GROVE_DECAY_GUARD_SHARE = env_float("GROVE_DECAY_GUARD_SHARE", 0.10)
GROVE_DECAY_GUARD_FLOOR = env_int("GROVE_DECAY_GUARD_FLOOR", 500)
# The triage names a proposal "like #N" from this cosine up (review/near.py). Unset, the
# embedder's own value (memory.vectors.embed.COSINES): 0.8 with the hashing embedder, where
# one word changed in a sentence of ten scores about 0.8-0.85, unrelated sentences of one topic
# below 0.65.
GROVE_NEAR_DUPLICATE_COSINE = env_optional_float("GROVE_NEAR_DUPLICATE_COSINE")
GROVE_EMBEDDER = env("GROVE_EMBEDDER", "memory.vectors.embed.HashingEmbedder")
GROVE_EMBEDDER_PATH = env("GROVE_EMBEDDER_PATH", "")
# Sleep fits a semantic model (TF-IDF + SVD) on the owner's text for recall
# (memory.vectors.semantic).
# Off by default: on LoCoMo dev it lost held-out R@10 to the hashing embedder (docs/recall.md).
GROVE_SEMANTIC_MODEL = env_bool("GROVE_SEMANTIC_MODEL", False)
GROVE_MODEL_DIR = Path(env("GROVE_MODEL_DIR", str(DATA_DIR / "models")))
# Recall's learned reranker (memory.recall.rerank, memory/recall/rerank.json); off: the fused
# order, a little cheaper (about 0.8 ms of cpu a recall at 10k) and a little worse
# (docs/recall.md, "Reranker").
GROVE_RERANK = env_bool("GROVE_RERANK", True)
GROVE_SLEEP_CRON = env("GROVE_SLEEP_CRON", "30 3 * * *")
# A running sleep whose heartbeat is older than this is taken for dead and marked failed.
GROVE_SLEEP_STALE_SECONDS = env_int("GROVE_SLEEP_STALE_SECONDS", 120)
# Cross-link's and consolidation's cosines: unset, the embedder's own (memory.vectors.embed).
GROVE_CROSSLINK_MIN_COSINE = env_optional_float("GROVE_CROSSLINK_MIN_COSINE")
GROVE_CROSSLINK_CAP = env_int("GROVE_CROSSLINK_CAP", 3)
# Threads for cross-link's join (numpy releases the GIL in it): the machine's cores, at most 4.
GROVE_SLEEP_THREADS = env_int("GROVE_SLEEP_THREADS", min(4, os.cpu_count() or 1))
GROVE_CONSOLIDATE_MIN_COSINE = env_optional_float("GROVE_CONSOLIDATE_MIN_COSINE")
# The vector index (memory.vectors.index): where it lives, and from how many vectors recall and
# cross-link use it instead of an exact scan (below that, the scan is fast and exact).
GROVE_VECTOR_INDEX_DIR = Path(env("GROVE_VECTOR_INDEX_DIR", str(DATA_DIR / "vector-index")))
GROVE_ANN_MIN_ROWS = env_int("GROVE_ANN_MIN_ROWS", 50_000)
GROVE_TICKET_SECONDS = env_int("GROVE_TICKET_SECONDS", 3600)
# Only tests set this: lets `flush` past the no-delete triggers (see grove/sqlite/base.py).
GROVE_ALLOW_FLUSH = False
