"""The JavaScript tutorial and the structured-output guide: each sample runs
under node, with the openai npm SDK, the Vercel AI SDK and LangChain.js,
against ``js_app`` and prints what the pages show.

The clients are the ones the library's JS suite pins
(packages/langgraph-openai-serve/tests/js_clients, installed by
``scripts/install-js-clients.sh``; ``just test`` runs it): each sample runs
from a temporary folder whose ``node_modules`` points there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import structured_client
from conftest import SAMPLES, expected_output

JS_CLIENTS = (
    SAMPLES.parents[1] / "packages" / "langgraph-openai-serve" / "tests" / "js_clients"
)


@pytest.fixture(scope="module")
def node_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("node") is None or not (JS_CLIENTS / "node_modules").is_dir():
        raise RuntimeError(
            "the JavaScript clients are not installed: run "
            "`bash scripts/install-js-clients.sh` (just test does)"
        )
    folder = tmp_path_factory.mktemp("js")
    (folder / "node_modules").symlink_to(JS_CLIENTS / "node_modules")
    return folder


@pytest.mark.parametrize(
    "sample", ["js_openai", "js_ai_sdk", "js_langchain", "js_structured"]
)
def test_javascript_sample_prints_what_the_page_shows(serve, node_folder, sample):
    server = serve("js_app")
    script = node_folder / f"{sample}.mjs"
    shutil.copyfile(SAMPLES / f"{sample}.mjs", script)

    ran = subprocess.run(
        ["node", str(script)],
        env={**os.environ, "LGOS_BASE_URL": server.base_url, "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == expected_output(f"{sample}.out")


def test_python_parse_helpers_read_the_forecast(serve, capsys):
    server = serve("js_app")

    structured_client.main(server.base_url)

    assert capsys.readouterr().out == expected_output("structured_client.out")
