"""``LGOS_*`` settings, read from the environment when a server is built.

Nothing reads the environment at import time: ``LanggraphOpenaiServe`` builds
a ``Settings`` when it is constructed, unless one is passed in.
"""

from __future__ import annotations

import base64
import datetime as dt
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from langgraph_openai_serve.api_keys import ApiKeys
from langgraph_openai_serve.deprecation import warn_renamed
from langgraph_openai_serve.json_limits import PARSER_MAX_DEPTH
from langgraph_openai_serve.webhooks.events import EVENT_TYPES


def normalize_prefix(value: str) -> str:
    """``v1/`` -> ``/v1``; the root prefix is refused (it would shadow the host)."""
    prefix = "/" + value.strip().strip("/")
    if prefix == "/":
        raise ValueError("the OpenAI API prefix must not be '/'")
    return prefix


class TenantLimitsSetting(BaseModel):
    """One tenant's entry of ``LGOS_TENANT_LIMITS``: a field left out takes
    the default, one set to ``null`` is unbounded for that tenant."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    runs: int | None = Field(default=None, ge=1)
    """Foreground runs at once in one process (``LGOS_TENANT_MAX_RUNS``)."""
    background: int | None = Field(default=None, ge=1)
    """Background Responses queued or running, over the fleet
    (``LGOS_TENANT_MAX_BACKGROUND``)."""
    batches: int | None = Field(default=None, ge=1)
    """Batches not yet ended, over the fleet (``LGOS_TENANT_MAX_BATCHES``)."""
    weight: float = Field(default=1.0, gt=0)
    """Its share of the workers' slots against other tenants' (1 each by
    default): a tenant of weight 2 gets twice the slots of one of weight 1
    while both have work waiting."""
    tenant_class: str | None = Field(
        default=None, alias="class", min_length=1, max_length=64
    )
    """The ``tenant_class`` label its queued jobs are counted under in the
    metrics (``"class": "premium"``; tenants without one: ``other``)."""


def check_webhook_secret(value: SecretStr) -> SecretStr:
    """A Standard Webhooks secret: ``whsec_`` + base64 bytes."""
    text = value.get_secret_value()
    try:
        decoded = base64.b64decode(text.removeprefix("whsec_"), validate=True)
    except ValueError:
        decoded = b""
    if not text.startswith("whsec_") or not decoded:
        raise ValueError("a webhook secret must be 'whsec_' + base64 bytes")
    return value


class WebhookEndpoint(BaseModel):
    """One entry of ``LGOS_WEBHOOK_ENDPOINTS``."""

    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)

    url: str
    scopes: list[str] = Field(min_length=1)
    """The tenants whose events it receives; ``"*"`` for every tenant."""
    events: list[str] | None = None
    """The event types it receives; unset for all."""
    secret: SecretStr | None = None
    """The ``whsec_...`` secret its deliveries are signed with, its
    receiver's alone. Unset: ``LGOS_WEBHOOK_SECRET``, which may sign one
    endpoint only."""

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        if urlsplit(value).scheme not in {"http", "https"}:
            raise ValueError("a webhook url must be http:// or https://")
        return value

    @field_validator("events")
    @classmethod
    def _events(cls, value: list[str] | None) -> list[str] | None:
        unknown = sorted(set(value or ()) - EVENT_TYPES)
        if unknown:
            raise ValueError(f"unknown webhook event types: {', '.join(unknown)}")
        return value

    @field_validator("secret")
    @classmethod
    def _secret(cls, value: SecretStr | None) -> SecretStr | None:
        return None if value is None else check_webhook_secret(value)


class Settings(BaseSettings):
    """Deployment settings of the OpenAI-compatible API."""

    model_config = SettingsConfigDict(
        env_prefix="LGOS_",
        frozen=True,
        extra="ignore",
        # Errors name the setting and the reason, never its value: values
        # include API keys and webhook secrets.
        hide_input_in_errors=True,
    )

    OPENAI_API_PREFIX: str = "/v1"
    """Where the OpenAI routes are mounted."""
    OPENAI_API_DOCS_ENABLED: bool = False
    """Expose ``{prefix}/docs``, ``{prefix}/redoc`` and ``{prefix}/openapi.json``.
    Off by default: they describe the server to anyone who asks and no client
    needs them. With ``LGOS_API_KEYS`` set they answer only with a key, like
    every OpenAI route but ``{prefix}/health`` (a browser sends none: fetch
    ``openapi.json`` with the key and open it in a viewer). The host app LGOS
    builds serves no ``/docs`` of its own."""
    SSE_PING_INTERVAL: float = Field(default=15.0, gt=0)
    """Seconds of silence after which a stream sends a ``: ping`` comment."""
    API_KEYS: SecretStr | None = None
    """Bearer keys for every OpenAI route but health: a JSON object mapping
    each key to a principal, or a comma-separated list. Unset: no auth."""
    GATEWAY_KEYS: SecretStr | None = None
    """Keys of trusted gateways, as a JSON object mapping each key to the
    gateway's principal (1-32 letters, digits, ``_`` or ``-``). A gateway key
    acts for the end user its request names in ``x-lgos-end-user`` (principal
    ``<gateway>.<end user>``); no other key may name one. Alone it does not
    turn auth on: keyless requests still run in the shared scope."""
    MAX_REQUEST_BYTES: int = Field(default=32 * 1024 * 1024, ge=1)
    """Largest request body accepted; a larger one answers 413."""
    MAX_JSON_DEPTH: int = Field(default=PARSER_MAX_DEPTH, ge=1, le=PARSER_MAX_DEPTH)
    """Deepest nesting of arrays and objects in a request body; deeper answers
    400. The default is the JSON parser's own bound and costs nothing; a
    lower one is checked on bodies with more brackets than the limit. The
    body of each line of a batch's input is held to it too."""
    MAX_JSON_ELEMENTS: int = Field(default=10_000, ge=1)
    """Most arrays and objects a request body (or a batch line's body) may
    hold; more answers 400 ``json_too_many_elements`` before validation,
    whose errors would cost about 4.5 KB per invalid element (45 MB at the
    default; validation runs one body at a time on a process's event loop).
    A long conversation replayed whole holds a few thousand."""
    RUN_TIMEOUT: float | None = Field(default=None, gt=0)
    """Seconds a foreground run may take (unset: no limit). Past it the graph
    is cancelled: a stream ends with the protocol's failure (``run_timeout``),
    a non-streaming request answers 504. Background runs are not limited."""
    MAX_RUNS: int | None = Field(default=256, ge=1)
    """Foreground runs (Chat Completions and Responses, streamed or not) one
    process serves at once; past it a request answers ``503
    server_overloaded`` with ``Retry-After`` at once, never waits. ``none``:
    unbounded."""
    MAX_STREAMS: int | None = Field(default=1024, ge=1)
    """Streams following background Responses (``GET /responses/{id}?stream=
    true``, a streamed background create) one process holds open at once;
    past it a new one answers ``503 server_overloaded`` with ``Retry-After``.
    A streamed foreground run counts in ``LGOS_MAX_RUNS`` instead. ``none``:
    unbounded."""
    TENANT_MAX_RUNS: int | None = Field(default=64, ge=1)
    """Foreground runs one tenant (one API key's scope) has at once in one
    process; past it ``429 rate_limit_exceeded`` with ``Retry-After`` and
    ``x-ratelimit-*`` headers. ``none``: only ``LGOS_MAX_RUNS`` bounds them."""
    TENANT_MAX_BACKGROUND: int | None = Field(default=128, ge=1)
    """Background Responses one tenant has queued or running at once, over
    the whole fleet; past it a submission answers ``429
    rate_limit_exceeded`` with ``Retry-After``. ``none``: unbounded."""
    TENANT_MAX_BATCHES: int | None = Field(default=16, ge=1)
    """Batches one tenant has open (not yet completed, failed, expired or
    cancelled) at once, over the fleet; past it creating one answers ``429
    rate_limit_exceeded``. ``none``: unbounded."""
    TENANT_LIMITS: dict[str, TenantLimitsSetting] = Field(default_factory=dict)
    """Per-tenant overrides, by scope, as JSON:
    ``{"batch-jobs": {"runs": 8, "weight": 0.5}, "premium": {"runs": 200}}``."""
    QUEUE_AGING: float | None = Field(default=30.0, gt=0)
    """Seconds a queued job waits to rise one priority class (a batch's line
    to a batch step, a step to a background Response's class), so bulk work
    is never starved by a stream of urgent work. ``none``: never."""
    CHECKPOINT_SCOPE: str | None = None
    """Who shares stored runs. Unset: each API key's principal is its own
    scope (paused runs, background Responses, idempotency keys). A
    ``module:callable`` taking the request names another resolver; ``none``
    puts every caller in one shared scope."""
    CORS_ORIGINS: list[str] = []
    """Browser origins allowed to call the API (``["*"]`` for any)."""
    ENABLE_LANGFUSE: bool = False
    """Trace every graph run with Langfuse (needs the ``tracing`` extra)."""
    METRICS_ENABLED: bool = True
    """Serve Prometheus metrics at ``GET /metrics`` (outside the OpenAI
    prefix, no API key) and record them; ``false`` records nothing."""
    CHAT_STATUS_AS_REASONING: bool = False
    """Forward visible status events to Chat Completions streams as
    ``reasoning_content`` deltas (an Open WebUI extension, not standard)."""
    RESPONSES_STATUS_AS_REASONING: bool = False
    """Show a streamed Response's status updates as reasoning summary items
    instead of ``phase="commentary"`` messages, unless a request chooses
    (``metadata.lgos_status``); clients that ignore ``phase`` (the Vercel AI
    SDK, LangChain.js) then keep them apart from the answer."""

    BACKGROUND_BACKEND: Literal["memory", "postgres"] = "memory"
    """Where background Responses run: this process, or PostgreSQL (a
    procrastinate queue drained by ``lgos worker`` processes)."""
    DATABASE_URL: SecretStr | None = None
    """PostgreSQL for the ``postgres`` background backend and response store."""
    DATABASE_TIMEOUT: float = Field(default=5.0, gt=0)
    """Seconds one database operation of a request may take, waiting for a
    pooled connection included; past it (the database stalls, refuses or is
    gone) the request answers 503 with ``Retry-After`` rather than waiting
    for the outage to end."""
    DATABASE_CONNECT_TIMEOUT: int = Field(default=3, ge=2)
    """Seconds a new database connection may take (libpq's
    ``connect_timeout``, at least 2)."""
    QUEUE_DATABASE_WAIT: float = Field(default=30.0, gt=0)
    """Seconds the job queue's own connections (a worker's heartbeat, job
    fetches and listener) wait for a database that is away; past them the
    worker starts over once the database is back, without a process
    restart (its running jobs go on meanwhile, or are handed back)."""
    CHECKPOINT_TIMEOUT: float = Field(default=30.0, gt=0)
    """Seconds one checkpoint read or write of a durable background run may
    take (LangGraph's saver); past it the run is handed back and runs again
    from its last checkpoint once the database answers. Longer than
    ``LGOS_DATABASE_TIMEOUT``: a large state takes longer to write than a
    row, and a run may rightly wait out a short stall."""
    RESPONSE_STORE: Literal["memory", "postgres"] | None = None
    """Keep Responses (``store``, retrieve, delete, ``input_items``,
    ``previous_response_id`` continuation): in this process's memory, or in
    PostgreSQL on ``LGOS_DATABASE_URL``. Unset: stateless (``store: true`` is
    refused)."""
    CONVERSATION_LOCK_SECONDS: float = Field(default=30.0, ge=1)
    """A Conversation runs one turn at a time; the process running a turn
    renews its lock every third of this. If the process dies, the lock
    lapses this many seconds after the last renewal (a background turn's
    lock lasts until its Response ends, whichever worker runs it)."""
    RESPONSE_RETENTION: dt.timedelta = Field(default=dt.timedelta(days=30))
    """How long a stored Response is kept (ISO 8601 like ``P30D``, or
    seconds); the server deletes older ones every hour and ``lgos
    responses-cleanup`` does it on demand."""
    BACKGROUND_CONCURRENCY: int = Field(default=8, ge=1)
    """Queued jobs (background runs, batch lines and steps, webhook
    deliveries) one process (API or worker) executes at once."""
    BACKGROUND_RESERVED_SLOTS: int = Field(default=1, ge=0)
    """Slots each such process keeps beyond ``LGOS_BACKGROUND_CONCURRENCY``
    for background Responses only (and work that waited long enough to rise
    to their class): one arriving while batch lines hold every other slot
    starts at once instead of at the end of a line. ``0``: none."""
    BACKGROUND_MAX_ATTEMPTS: int = Field(default=3, ge=1)
    """Runs of one background Response that may be lost with their worker
    (killed, crashed) before the Response fails; stops do not count."""
    WORKER_SHUTDOWN_TIMEOUT: float = Field(default=25.0, ge=0)
    """Seconds ``lgos worker`` gives running jobs to finish after SIGTERM or
    SIGINT; it then hands the unfinished ones back to the queue."""
    WORKER_HEARTBEAT_INTERVAL: float = Field(default=5.0, gt=0)
    """Seconds between the heartbeats each ``lgos worker`` writes."""
    WORKER_STALLED_TIMEOUT: float = Field(default=30.0, gt=0)
    """Seconds without a heartbeat after which a worker counts as dead and
    its jobs are run again (keep it several heartbeats long)."""
    WORKER_STALLED_CHECK_INTERVAL: float = Field(default=10.0, gt=0)
    """Seconds between two sweeps for jobs of dead workers; a lost job runs
    again within about ``WORKER_STALLED_TIMEOUT`` plus this."""
    WORKER_HEALTH_PORT: int | None = Field(default=None, ge=0, le=65535)
    """Port on which ``lgos worker`` serves ``/health/live`` and
    ``/health/ready`` (ready: registered in the queue, heartbeating, not
    stopping). Unset: no HTTP server."""
    WORKER_HEALTH_HOST: str = "127.0.0.1"
    """Interface of the worker's health port (``0.0.0.0`` for probes from
    outside the machine or container)."""

    BATCH_FILES_URL: str | None = None
    """The OpenAI-compatible Files API batches read their input from and
    write their output and error files to (its base URL, ``.../v1``).
    Unset: creating a batch answers 400."""
    BATCH_FILES_API_KEY: SecretStr | None = None
    """A service key of that Files API (``LGOS_FILES_SERVICE_KEYS``): it
    acts for each batch's tenant, whose scope names the files' owner."""
    BATCH_CONCURRENCY: int = Field(default=4, ge=1)
    """Requests of one batch running at once, over all workers (a waiting
    background Response is taken before the batch's next line whatever this
    is: a chunk frees its slot between lines for it)."""
    BATCH_MAX_LINES: int = Field(default=50_000, ge=1)
    """Most requests one batch's input file may hold (OpenAI's limit)."""
    BATCH_MAX_INPUT_BYTES: int = Field(default=200 * 1024 * 1024, ge=1)
    """Largest input file a batch reads, in bytes (OpenAI's 200 MB)."""
    BATCH_MAX_LINE_BYTES: int = Field(default=1024 * 1024, ge=1)
    """Longest line (one request) of a batch's input file, in bytes; a
    longer one fails the batch naming the line (``line_too_large``), read
    past without being held. Parsing a line may take about 25 times its
    size, so a worker validating a batch holds at most about 27 times this
    (27 MiB at the default; a worker validates at most
    ``LGOS_BACKGROUND_CONCURRENCY`` batches at once). 1 MiB of text is more
    tokens than most models' context; raise it for lines carrying images.
    A line's body nests at most ``LGOS_MAX_JSON_DEPTH`` levels, as a
    request's (deeper: ``json_too_deep``)."""
    BATCH_LINES_PER_JOB: int = Field(default=25, ge=1)
    """Most requests one queue job runs in turn: a batch is cut into rounds
    of ``LGOS_BATCH_CONCURRENCY`` equal chunks of at most this many, so its
    slots stay busy to its end."""
    BATCH_COMPLETION_WINDOW: dt.timedelta = Field(default=dt.timedelta(hours=24))
    """How long a batch may run before it expires (``completion_window`` is
    ``24h`` on the wire; a deployment may give less or more)."""
    BATCH_EXPIRY_CHECK_INTERVAL: float = Field(default=30.0, gt=0)
    """Seconds between two looks, in every ``lgos serve`` and ``lgos worker``
    process, for batches past their window: such a batch moves to
    ``finalizing`` (then ``expired``) within this time even when none of
    its requests is running."""

    WEBHOOK_ENDPOINTS: list[WebhookEndpoint] = []
    """Where events go: a JSON list of ``{"url", "scopes", "events",
    "secret"}``. An endpoint receives the events of the tenants (scopes) it
    lists (``"*"``: every tenant) whose type it lists (all types when
    ``events`` is left out): ``response.completed|failed|cancelled|incomplete``
    of background Responses and ``batch.completed|failed|cancelled|expired``.
    Each receiver (url) signs with a ``secret`` of its own (Standard
    Webhooks, as OpenAI signs), so no receiver can forge another's events;
    two urls never share one."""
    WEBHOOK_SECRET: SecretStr | None = None
    """The ``whsec_...`` secret of an endpoint configured without its own
    ``secret``: allowed for one receiver (url) only."""
    WEBHOOK_RETRY_FOR: dt.timedelta = Field(default=dt.timedelta(hours=72))
    """How long a delivery that fails (non-2xx or timeout) is retried, with
    exponential back-off, after its event."""
    WEBHOOK_TIMEOUT: float = Field(default=10.0, gt=0)
    """Seconds an endpoint has to answer one delivery."""

    # Used by ``lgos serve`` only.
    REGISTRY: str | None = None
    """``module:attribute`` naming a GraphRegistry, or a callable making one."""
    HOST: str = "127.0.0.1"
    """Interface ``lgos serve`` binds."""
    PORT: int = Field(default=8000, ge=0, le=65535)
    """Port ``lgos serve`` binds."""
    WORKERS: int = Field(default=1, ge=1)
    """uvicorn worker processes ``lgos serve`` starts."""
    SHUTDOWN_TIMEOUT: int = Field(default=30, ge=0)
    """Seconds in-flight requests and streams get to finish on shutdown."""
    DRAIN_DELAY: float = Field(default=0.0, ge=0)
    """Seconds a SIGTERMed ``lgos serve`` goes on serving, not-ready
    (``/health/ready`` answers 503, responses carry ``Connection: close``),
    before it stops accepting: long enough for the load balancer to stop
    routing to it (its probe interval times its failure threshold, or
    Kubernetes' endpoint removal). Then ``SHUTDOWN_TIMEOUT`` applies."""
    LOG_FORMAT: Literal["json", "text"] = "json"
    """``lgos serve`` writes log records to stderr as JSON lines or plain text."""
    LOG_LEVEL: str = "INFO"
    """The root log level ``lgos serve`` sets (``DEBUG``, ``INFO``, ...)."""

    @field_validator("OPENAI_API_PREFIX")
    @classmethod
    def _prefix(cls, value: str) -> str:
        return normalize_prefix(value)

    @field_validator("RESPONSE_STORE", "WORKER_HEALTH_PORT", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: Any) -> Any:
        return None if value == "" else value

    @field_validator("BATCH_COMPLETION_WINDOW")
    @classmethod
    def _window(cls, value: dt.timedelta) -> dt.timedelta:
        if value <= dt.timedelta(0):
            raise ValueError("LGOS_BATCH_COMPLETION_WINDOW must be positive")
        return value

    @field_validator("RESPONSE_RETENTION")
    @classmethod
    def _retention(cls, value: dt.timedelta) -> dt.timedelta:
        if value <= dt.timedelta(0):
            raise ValueError("LGOS_RESPONSE_RETENTION must be positive")
        return value

    @model_validator(mode="after")
    def _heartbeats(self) -> Settings:
        if self.WORKER_HEARTBEAT_INTERVAL >= self.WORKER_STALLED_TIMEOUT:
            raise ValueError(
                "LGOS_WORKER_HEARTBEAT_INTERVAL must be shorter than "
                "LGOS_WORKER_STALLED_TIMEOUT"
            )
        return self

    @model_validator(mode="after")
    def _batch_files(self) -> Settings:
        if self.BATCH_FILES_URL is not None and self.BATCH_FILES_API_KEY is None:
            raise ValueError(
                "LGOS_BATCH_FILES_URL needs LGOS_BATCH_FILES_API_KEY (a service "
                "key of that Files API)"
            )
        return self

    @model_validator(mode="after")
    def _webhooks(self) -> Settings:
        webhook_secrets(self.WEBHOOK_ENDPOINTS, self.WEBHOOK_SECRET)
        return self

    @field_validator("WEBHOOK_SECRET")
    @classmethod
    def _webhook_secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None:
            return None
        try:
            return check_webhook_secret(value)
        except ValueError:
            raise ValueError(
                "LGOS_WEBHOOK_SECRET must be 'whsec_' + base64 bytes"
            ) from None

    def webhook_secrets(self) -> dict[str, str]:
        """Each webhook receiver's (url's) signing secret."""
        return webhook_secrets(self.WEBHOOK_ENDPOINTS, self.WEBHOOK_SECRET)

    @field_validator(
        "MAX_RUNS",
        "MAX_STREAMS",
        "TENANT_MAX_RUNS",
        "TENANT_MAX_BACKGROUND",
        "TENANT_MAX_BATCHES",
        "QUEUE_AGING",
        mode="before",
    )
    @classmethod
    def _unbounded(cls, value: Any) -> Any:
        """``none`` (or an empty value) lifts a limit."""
        if isinstance(value, str) and value.strip().lower() in {"", "none"}:
            return None
        return value

    @model_validator(mode="after")
    def _api_keys(self) -> Settings:
        self.api_keys()  # fail at startup, not later
        return self

    def tenant_class(self, scope: str) -> str:
        """The metrics' class of ``scope`` (``other`` unless configured)."""
        own = self.TENANT_LIMITS.get(scope)
        return own.tenant_class if own is not None and own.tenant_class else "other"

    def api_keys(self) -> ApiKeys | None:
        """The parsed API and gateway keys, or ``None`` when neither is set."""
        if self.API_KEYS is None and self.GATEWAY_KEYS is None:
            return None
        return ApiKeys.parse(
            _secret(self.API_KEYS), gateways=_secret(self.GATEWAY_KEYS)
        )

    def docs_kwargs(self) -> dict[str, Any]:
        """FastAPI constructor arguments for the API documentation routes."""
        if self.OPENAI_API_DOCS_ENABLED:
            return {}
        return {"docs_url": None, "redoc_url": None, "openapi_url": None}

    @property
    def fastapi_docs_kwargs(self) -> dict[str, Any]:
        """Deprecated: ``docs_kwargs()``."""
        warn_renamed("Settings.fastapi_docs_kwargs", "Settings.docs_kwargs()")
        return self.docs_kwargs()


def _secret(value: SecretStr | None) -> str | None:
    return value.get_secret_value() if value is not None else None


_module_settings: Settings | None = None


def __getattr__(name: str) -> Any:
    # The reference's module-level ``settings`` object (and its docs
    # kwargs), read from the environment on first use rather than at import.
    global _module_settings
    if name == "settings":
        warn_renamed(
            "langgraph_openai_serve.settings.settings",
            "Settings() or LanggraphOpenaiServe(settings=...)",
        )
        if _module_settings is None:
            _module_settings = Settings()
        return _module_settings
    if name == "fastapi_docs_kwargs":
        warn_renamed(
            "langgraph_openai_serve.settings.fastapi_docs_kwargs",
            "Settings().docs_kwargs()",
        )
        return Settings().docs_kwargs()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def webhook_secrets(
    endpoints: list[WebhookEndpoint], shared: SecretStr | None
) -> dict[str, str]:
    """The signing secret of each receiver (url): its endpoints' own, or
    ``shared`` (``LGOS_WEBHOOK_SECRET``) for the one receiver without.

    Raises:
        ValueError: a receiver without a secret, the shared secret asked to
            sign several receivers, one receiver given two secrets, or two
            receivers sharing one (either could forge the other's events).
    """
    signing: dict[str, str] = {}
    for endpoint in endpoints:
        own = endpoint.secret or shared
        if own is None:
            raise ValueError(
                f"the webhook endpoint {endpoint.url} needs a secret: its own "
                '"secret", or LGOS_WEBHOOK_SECRET'
            )
        secret = own.get_secret_value()
        if signing.setdefault(endpoint.url, secret) != secret:
            raise ValueError(
                f"the webhook endpoints of {endpoint.url} give it two secrets"
            )
    unsigned = sorted({e.url for e in endpoints if e.secret is None})
    if len(unsigned) > 1:
        raise ValueError(
            "LGOS_WEBHOOK_SECRET may sign one webhook endpoint only; give each "
            f'of {", ".join(unsigned)} a "secret" of its own'
        )
    receivers: dict[str, str] = {}
    for url, secret in signing.items():
        other = receivers.setdefault(secret, url)
        if other != url:
            raise ValueError(
                f"the webhook endpoints {other} and {url} share a secret: "
                "each receiver needs its own"
            )
    return signing
