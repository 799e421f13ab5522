"""The browser suite's fixtures: the native stack once per session, Debian's
Chromium for pytest-playwright, and a screenshot plus the console log of
every page of a failing test under ``e2e/results/``.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lgos_e2e.browser import launch_args
from lgos_e2e.chainlit import ChainlitPage
from lgos_e2e.open_webui import OpenWebUIPage, dismiss_whats_new
from lgos_e2e.stack import CHAINLIT_MAX_MESSAGE_BYTES, PLAIN_MODELS
from lgos_e2e.stack import STARTUP_SECONDS as STACK_START_SECONDS
from lgos_testkit import pid_alive
from lgos_testkit.stack import (
    RunningStack,
    postgres_dir,
    read_stack,
    stack_env,
    start_stack,
    stop_stack,
)
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, expect

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "e2e" / "results"
# Work on the suite against a stack already running:
# LGOS_E2E_ATTACH=<its --state-dir> (never in CI: the suite owns its stack).
ATTACH_VARIABLE = "LGOS_E2E_ATTACH"
# A page waits on a shared, busy machine: generous, but still a bound.
expect.set_options(timeout=45_000)


@pytest.fixture(scope="session")
def stack(request: pytest.FixtureRequest) -> Iterator[RunningStack]:
    """``lgos-demo-stack`` with every service, on free ports, stopped at the end.

    Chainlit runs as by default: each browser a guest whose chats are kept
    and reattached after a page reload. LGOS sends status commentary as
    ``reasoning_content`` on Chat Completions, which Open WebUI shows as its
    reasoning block; Open WebUI's own connection lists ``PLAIN_MODELS``, the
    LGOS Function every other graph. Chainlit's message limit is lowered
    to ``CHAINLIT_MAX_MESSAGE_BYTES``. When a test failed, the services' logs
    are copied to ``e2e/results/stack-logs/``.
    """
    # Not under pytest's basetemp: other pytest sessions on this machine prune
    # old numbered folders, which would pull the state from under the stack.
    # As root PostgreSQL runs as its own user, so its cluster gets a folder of
    # its own under the system temp folder (made traversable by the stack).
    attach = os.environ.get(ATTACH_VARIABLE)
    if attach:
        yield read_stack(Path(attach))
        return
    state = Path(tempfile.mkdtemp(prefix="lgos-e2e-stack-"))
    postgres = postgres_dir(prefix="lgos-e2e-pg-")
    env = stack_env(
        OPEN_WEBUI_PLAIN_MODELS=",".join(PLAIN_MODELS),
        DEMO_MODEL_TOKEN_DELAY="0.03",
        LGOS_CHAINLIT_MAX_MESSAGE_BYTES=str(CHAINLIT_MAX_MESSAGE_BYTES),
    )
    try:
        running = start_stack(
            state,
            env=env,
            args=(f"--postgres-dir={postgres}", f"--tools-dir={REPO / '.tools'}"),
            timeout=STACK_START_SECONDS,
        )
        assert running.process is not None
        yield running
        stopped = stop_stack(running.process, running.pids)
        if request.session.testsfailed:
            _keep_stack_logs(state)
    except BaseException:
        _keep_stack_logs(state)
        raise
    finally:
        shutil.rmtree(postgres, ignore_errors=True)
        shutil.rmtree(state, ignore_errors=True)
    left = [name for name, pid in running.pids.items() if pid_alive(pid)]
    assert stopped, f"the stack ignored SIGINT:\n{running.output.read_text()[-3000:]}"
    assert not left, f"still running after the stack stopped: {left}"


def _keep_stack_logs(state: Path) -> None:
    target = RESULTS / "stack-logs"
    shutil.rmtree(target, ignore_errors=True)
    if (state / "logs").is_dir():
        shutil.copytree(state / "logs", target)
    if (state / "stack.out").is_file():
        RESULTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(state / "stack.out", target / "stack.out")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The first test also waits for the stack to start (pytest-timeout
    counts fixture setup): give it that time on top of its own. Each of the
    stack's services has ``STACK_START_SECONDS`` from its own start, and they
    start in rounds (PostgreSQL, the demo API, the model sync, LiteLLM, the
    UIs, ...), so this hang guard allows a slow machine three such budgets in
    all. Last, so the first test is the first one left after ``-k``
    deselection."""
    if items and items[0].get_closest_marker("timeout") is None:
        guard = 3 * STACK_START_SECONDS + 120
        items[0].add_marker(pytest.mark.timeout(guard))


@pytest.fixture(scope="session")
def browser_type_launch_args(
    browser_type_launch_args: dict[str, Any],
) -> dict[str, Any]:
    """pytest-playwright's Chromium is Debian's (``executable_path``)."""
    return launch_args(browser_type_launch_args)


@pytest.fixture(scope="session")
def base_url() -> None:
    """Pages use absolute URLs; this replaces pytest-base-url's fixture (an
    instance-method fixture that pytest 9 warns about)."""
    return


# -- failure artifacts ------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.when == "call":
        item.stash[_CALL_FAILED] = report.failed
    return report


_CALL_FAILED = pytest.StashKey[bool]()


@pytest.fixture
def context(
    context: BrowserContext, request: pytest.FixtureRequest
) -> Iterator[BrowserContext]:
    """pytest-playwright's context, keeping each page's console for failures."""
    logs: dict[Page, list[str]] = {}

    def watch(page: Page) -> None:
        lines = logs.setdefault(page, [])

        def record(message: ConsoleMessage) -> None:
            lines.append(f"[{message.type}] {message.text}")

        page.on("console", record)
        page.on("pageerror", lambda error: lines.append(f"[pageerror] {error}"))

    context.on("page", watch)
    context.set_default_timeout(45_000)
    yield context
    if request.node.stash.get(_CALL_FAILED, False):
        _save_artifacts(request.node.name, logs)


def _save_artifacts(test_name: str, logs: dict[Page, list[str]]) -> None:
    folder = RESULTS / re.sub(r"[^A-Za-z0-9_.-]+", "_", test_name)
    folder.mkdir(parents=True, exist_ok=True)
    for number, (page, lines) in enumerate(logs.items(), start=1):
        (folder / f"page{number}-console.log").write_text("\n".join(lines) + "\n")
        if not page.is_closed():
            try:
                page.screenshot(path=str(folder / f"page{number}.png"), full_page=True)
            except Exception as exc:  # the page may be gone mid-failure
                (folder / f"page{number}-screenshot-error.txt").write_text(str(exc))


# -- the UIs ----------------------------------------------------------------


@pytest.fixture
def chainlit(page: Page, stack: RunningStack) -> ChainlitPage:
    """A tab on the stack's Chainlit (a new guest: a new browser context)."""
    ui = ChainlitPage(page, stack.url("Chainlit"))
    ui.open()
    return ui


@pytest.fixture(scope="session")
def open_webui_url(stack: RunningStack, browser: Browser) -> str:
    """Open WebUI's URL, its first-visit dialog dismissed once for the stack
    (an attached stack has been visited already). The stack installed the
    LGOS Function (its "Open WebUI functions" one-shot)."""
    url = stack.url("Open WebUI")
    if stack.process is not None:
        first_visit = browser.new_context()
        try:
            dismiss_whats_new(first_visit.new_page(), url)
        finally:
            first_visit.close()
    return url


@pytest.fixture
def open_webui(page: Page, open_webui_url: str) -> OpenWebUIPage:
    """A tab on the stack's Open WebUI, on a new chat."""
    ui = OpenWebUIPage(page, open_webui_url)
    ui.open()
    return ui
