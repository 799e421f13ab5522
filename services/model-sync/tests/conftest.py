"""Shared fixtures: a real LGOS server, a catalog server for bad input, the
command run in-process, and one real LiteLLM proxy for the session.

The helpers behind them are in ``model_sync_support.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from lgos_testkit import LITELLM_BIN, ThreadServer
from model_sync_support import (
    LGOS_KEY,
    CatalogServer,
    Exchange,
    LgosServer,
    LiteLLMProxy,
    Outcome,
    build_registry,
    create_lgos_app,
    deployment_spec,
    run_cli,
    seed_config,
)

SyncCli = Callable[..., Outcome]


@pytest.fixture(scope="session")
def lgos_server() -> Iterator[LgosServer]:
    """The core library serving ``echo``, ``tuned`` and ``retiring``.

    Every HTTP exchange it serves is kept in ``lgos_server.exchanges``.
    """
    registry = build_registry()
    exchanges: list[Exchange] = []
    with ThreadServer(create_lgos_app(registry, LGOS_KEY, exchanges)) as server:
        yield LgosServer(registry, f"{server.url}/v1", LGOS_KEY, exchanges)


@pytest.fixture(scope="session")
def _catalog_server() -> Iterator[CatalogServer]:
    catalog = CatalogServer()
    with ThreadServer(catalog.app()) as server:
        catalog.base_url = f"{server.url}/v1"
        yield catalog


@pytest.fixture
def catalog(_catalog_server: CatalogServer) -> Iterator[CatalogServer]:
    """The catalog server, answering nothing until the test says what."""
    _catalog_server.answers = {}
    yield _catalog_server
    _catalog_server.answers = {}


@pytest.fixture
def sync_cli() -> SyncCli:
    """Run ``lgos-model-sync`` in-process with the test key in its environment."""
    return run_cli


_STARTUPS_KEY = pytest.StashKey[list[float]]()


@pytest.fixture(scope="session")
def litellm(
    lgos_server: LgosServer,
    tmp_path_factory: pytest.TempPathFactory,
    pytestconfig: pytest.Config,
) -> Iterator[LiteLLMProxy]:
    """One LiteLLM for the session, on a config synced from ``lgos_server``."""
    if not LITELLM_BIN.exists():
        pytest.fail(
            f"LiteLLM's tool environment is missing ({LITELLM_BIN}): "
            "run `bash scripts/install-litellm.sh` first"
        )
    workdir = tmp_path_factory.mktemp("litellm")
    config = workdir / "litellm.yaml"
    config.write_text(seed_config(lgos_server.base_url))
    synced = run_cli(
        "--config", str(config), "--deployment", deployment_spec(lgos_server.base_url)
    )
    assert synced.code == 0, synced.err
    proxy = LiteLLMProxy(
        config, workdir, pytestconfig.stash.setdefault(_STARTUPS_KEY, [])
    )
    try:
        proxy.start()
        yield proxy
    finally:
        proxy.stop()


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    startups = config.stash.get(_STARTUPS_KEY, [])
    if startups:
        times = ", ".join(f"{seconds:.1f} s" for seconds in startups)
        terminalreporter.write_line(f"LiteLLM proxy startups: {times}")
