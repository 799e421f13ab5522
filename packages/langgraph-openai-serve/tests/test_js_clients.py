"""The JavaScript OpenAI clients, unchanged, against a real ``lgos serve``.

``js_clients/`` holds a suite for node's test runner that drives LGOS with
the ``openai`` npm SDK, the Vercel AI SDK (``openai(...)`` on Responses,
``openai.chat(...)`` on Chat Completions) and LangChain.js (``ChatOpenAI``
on both APIs), written as each client's own documentation writes it: text,
streams, tool loops, multi-turn replay (the AI SDK's ``item_reference``
against a response store too), status updates, errors. The clients are
pinned by ``js_clients/package-lock.json`` and installed by
``scripts/install-js-clients.sh`` (``just test`` runs it); the suite then
runs offline. One server serves every journey: ``js_clients_app.py``'s
scripted graphs, with Responses kept in memory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import TESTS_DIR, LgosServe, start_lgos_serve

JS_CLIENTS = TESTS_DIR / "js_clients"
SUITE_SECONDS = 120
"""A file's journeys take a few seconds; past this something hangs."""


def _node() -> str:
    node = shutil.which("node")
    if node is None or not (JS_CLIENTS / "node_modules").is_dir():
        raise RuntimeError(
            "the JavaScript clients are not installed: run "
            "`bash scripts/install-js-clients.sh` (just test does)"
        )
    return node


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LgosServe]:
    server = start_lgos_serve(
        tmp_path_factory.mktemp("js-clients"),
        "js_clients_app:registry",
        LGOS_RESPONSE_STORE="memory",
    )
    yield server
    server.process.stop()


def _run_suite(served: LgosServe, file: str) -> str:
    finished = subprocess.run(
        [_node(), "--test", "--test-reporter=spec", file],
        cwd=JS_CLIENTS,
        env={**os.environ, "LGOS_BASE_URL": served.base_url, "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=SUITE_SECONDS,
        check=False,
    )
    report = finished.stdout + finished.stderr
    assert finished.returncode == 0, f"{file} failed:\n{report}"
    assert "# fail 0" in report or "ℹ fail 0" in report, report
    return report


@pytest.mark.parametrize(
    "suite",
    [
        pytest.param("openai-sdk.test.mjs", id="openai-npm-sdk"),
        pytest.param("ai-sdk.test.mjs", id="vercel-ai-sdk"),
        pytest.param("langchain.test.mjs", id="langchain-js"),
    ],
)
def test_javascript_client_journeys_pass_unchanged(served: LgosServe, suite: str):
    report = _run_suite(served, suite)

    assert "ℹ pass 0" not in report, report


def test_every_suite_file_is_run() -> None:
    # A new journey file must be added above, or it never runs.
    files = sorted(path.name for path in Path(JS_CLIENTS).glob("*.test.mjs"))
    assert files == ["ai-sdk.test.mjs", "langchain.test.mjs", "openai-sdk.test.mjs"]
