"""A throwaway fleet for the benches that need PostgreSQL: the database with
LGOS's tables (``lgos db-setup``), and any number of ``lgos serve`` and
``lgos worker`` processes on the PostgreSQL backend, started at once or one
by one while the bench runs, each waited for until it is ready and stopped
by its PID at the end.

```
with fleet(folder, log, apis=2, workers=1) as running:
    running.apis                  # each lgos serve's base URL (.../v1)
    api = running.start_api()     # one more, ready: api.base, api.process
    with running.workers(3):      # three more workers for the block
        ...
```

A bench that brings its own PostgreSQL (``lgos-bench outage`` runs the
fleet on a database it breaks) passes its URL as ``database_url``: the
fleet then only sets LGOS's tables up on it. ``python`` runs the ``lgos``
processes (``db-setup`` included) with another tree's interpreter, so one
bench can measure two checkouts of the library.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from lgos_stack.net import LOOPBACK, STARTUP_SECONDS, free_port, wait_until
from lgos_stack.postgres import database_url
from lgos_stack.processes import RunningProcess, running

from lgos_bench.workload import Workload

Log = Callable[[str], None]

BENCH_TOKENS = 8
"""A short answer: the fleet benches time the queue and the store."""
REGISTRY = "lgos_bench.lgos_app:background_registry"


def lgos_command(*args: str, python: str | None = None) -> list[str]:
    """``lgos ARGS`` with ``python`` (this interpreter unless given)."""
    return [python or sys.executable, "-m", "langgraph_openai_serve.cli", *args]


def _accepts_connections(url: str) -> bool:
    try:
        with psycopg.connect(url, connect_timeout=2):
            return True
    except psycopg.OperationalError:
        return False


@dataclass(frozen=True, slots=True)
class Database:
    url: str
    pid: int | None
    """The PostgreSQL launcher's (its process tree is the server's) when
    ``postgres_database`` started it; ``None`` for a database given to the
    fleet, whose server the fleet does not own."""


def set_up(url: str, python: str | None = None) -> None:
    """LGOS's tables on ``url`` (``lgos db-setup`` with ``python``)."""
    env = {**os.environ, "LGOS_DATABASE_URL": url}
    command = lgos_command("db-setup", python=python)
    subprocess.run(command, env=env, check=True, timeout=120)


@contextmanager
def postgres_database(
    folder: Path, log: Log, *, python: str | None = None
) -> Iterator[Database]:
    """A throwaway PostgreSQL with LGOS's tables (``lgos db-setup``)."""
    pg_port = free_port()
    url = database_url("127.0.0.1", pg_port, folder / "data")
    postgres = [sys.executable, "-m", "lgos_stack.postgres"]
    postgres += ["--data", str(folder / "data"), "--port", str(pg_port)]
    with running(postgres, log=folder / "postgres.log", name="PostgreSQL") as started:
        wait_until(lambda: _accepts_connections(url), STARTUP_SECONDS, "PostgreSQL")
        log("PostgreSQL is up; lgos db-setup")
        set_up(url, python)
        yield Database(url, started.pid)


@contextmanager
def given_database(
    url: str, log: Log, *, python: str | None = None
) -> Iterator[Database]:
    """A PostgreSQL the caller runs, with LGOS's tables set up on it."""
    log("lgos db-setup on the given database")
    set_up(url, python)
    yield Database(url, None)


def fleet_env(
    database: str,
    *,
    registry: str = REGISTRY,
    workload: Workload | None = None,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment of the fleet's ``lgos`` processes: the bench's
    registry and workload (8 tokens unless given) on the PostgreSQL backend,
    then ``extra`` (``LGOS_BACKGROUND_CONCURRENCY`` ...)."""
    env = {
        **os.environ,
        "LGOS_REGISTRY": registry,
        "LGOS_BACKGROUND_BACKEND": "postgres",
        "LGOS_DATABASE_URL": database,
        "LGOS_LOG_LEVEL": "WARNING",
        **(workload or Workload(tokens=BENCH_TOKENS)).env(),
        **(extra or {}),
    }
    # Let the first process cache bytecode for the others.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


@dataclass(frozen=True, slots=True)
class Api:
    base: str
    """``http://127.0.0.1:PORT/v1``."""
    process: RunningProcess

    @property
    def health(self) -> str:
        """Its ``/health/ready``."""
        return self.base.rsplit("/", 1)[0] + "/health/ready"


@dataclass
class Fleet:
    """PostgreSQL and the ``lgos`` processes started on it so far."""

    database: Database
    env: dict[str, str]
    folder: Path
    processes: ExitStack
    python: str | None = None
    """The interpreter of the ``lgos`` processes (``None``: this one)."""
    started_apis: list[Api] = field(default_factory=list)
    started_workers: list[RunningProcess] = field(default_factory=list)
    worker_health: list[str] = field(default_factory=list)
    """Each started worker's ``/health/ready``, in the order started."""

    @property
    def apis(self) -> tuple[str, ...]:
        """Each running ``lgos serve``'s base URL, in the order started."""
        return tuple(api.base for api in self.started_apis)

    def start_api(
        self, env: Mapping[str, str] | None = None, *, port: int | None = None
    ) -> Api:
        """One more ``lgos serve``, once ``/health/ready`` answers; it runs
        until the fleet stops. ``env`` adds to the fleet's; ``port``: the one
        of a process that exited, to start it again where clients look."""
        number = len(self.started_apis)
        port = port or free_port()
        process = self.processes.enter_context(
            running(
                lgos_command("serve", "--port", str(port), python=self.python),
                log=self.folder / f"serve-{number}.log",
                name=f"lgos serve {number}",
                env={**self.env, **(env or {})},
                health_url=f"http://{LOOPBACK}:{port}/health/ready",
            )
        )
        api = Api(f"http://{LOOPBACK}:{port}/v1", process)
        self.started_apis.append(api)
        return api

    def start_worker(
        self,
        env: Mapping[str, str] | None = None,
        *,
        exits: ExitStack | None = None,
        port: int | None = None,
    ) -> RunningProcess:
        """One more ``lgos worker``, once its ``/health/ready`` answers; it
        runs until ``exits`` closes (the fleet's end by default). ``port``:
        its health port (the one of a worker that exited, to start it again
        where the probes look)."""
        number = len(self.started_workers)
        port = port or free_port()
        command = lgos_command("worker", "--health-port", str(port), python=self.python)
        health = f"http://{LOOPBACK}:{port}/health/ready"
        process = (exits or self.processes).enter_context(
            running(
                command,
                log=self.folder / f"worker-{number}.log",
                name=f"lgos worker {number}",
                env={**self.env, **(env or {})},
                health_url=health,
            )
        )
        self.started_workers.append(process)
        self.worker_health.append(health)
        return process

    @contextmanager
    def workers(
        self, count: int, env: Mapping[str, str] | None = None
    ) -> Iterator[list[RunningProcess]]:
        """``count`` more workers, each ready, stopped when the block ends."""
        with ExitStack() as exits:
            yield [self.start_worker(env, exits=exits) for _ in range(count)]


@contextmanager
def fleet_folder(keep: Path | None, mode: str) -> Iterator[Path]:
    """Where a fleet's logs go: ``keep`` (left there) or a temporary folder
    removed at the end."""
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        yield keep
        return
    with tempfile.TemporaryDirectory(prefix=f"lgos-bench-{mode}-") as folder:
        yield Path(folder)


@contextmanager
def fleet(
    folder: Path,
    log: Log,
    *,
    apis: int = 1,
    workers: int = 1,
    registry: str = REGISTRY,
    workload: Workload | None = None,
    env: Mapping[str, str] | None = None,
    database_url: str | None = None,
    python: str | None = None,
) -> Iterator[Fleet]:
    """PostgreSQL (a throwaway one unless ``database_url`` is given), then
    ``apis`` ``lgos serve`` and ``workers`` ``lgos worker`` processes, each
    ready; more may be started on the ``Fleet``. ``python`` runs the ``lgos``
    processes. Every process is stopped, by its PID, on exit."""
    database_cm = (
        postgres_database(folder, log, python=python)
        if database_url is None
        else given_database(database_url, log, python=python)
    )
    with database_cm as database, ExitStack() as processes:
        running_fleet = Fleet(
            database,
            fleet_env(database.url, registry=registry, workload=workload, extra=env),
            folder,
            processes,
            python,
        )
        for _ in range(apis):
            running_fleet.start_api()
        for _ in range(workers):
            running_fleet.start_worker()
        log(f"{apis} lgos serve and {workers} lgos worker processes are up")
        yield running_fleet
