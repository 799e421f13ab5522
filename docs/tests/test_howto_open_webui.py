"""The Open WebUI page names the sync's flags, the Function's valves and the
settings the demo stack gives Open WebUI, as the code has them."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from lgos_open_webui.functions.lgos_responses import Pipe
from lgos_stack.webuis import model_choice_env, open_webui_services

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "how-to" / "open-webui.md").read_text()


def sync_usage() -> str:
    command = shutil.which("lgos-open-webui-sync")
    assert command is not None
    return subprocess.run(
        [command, "--help"], capture_output=True, text=True, check=True
    ).stdout


def table_rows(header: str) -> list[list[str]]:
    """The rows of the table whose first header cell is ``header``."""
    rows: list[list[str]] = []
    inside = False
    for line in PAGE.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("|"):
            inside = False
        elif cells[0] == header:
            inside = True
        elif inside and not cells[0].startswith("---"):
            rows.append(cells)
    return rows


def test_every_flag_and_variable_on_the_page_is_one_the_sync_reads():
    usage = sync_usage()

    flags = set(re.findall(r"(--[a-z][a-z-]+)", PAGE))
    variables = set(re.findall(r"LGOS_OPEN_WEBUI_[A-Z_]+", PAGE))

    assert len(flags) >= 10
    assert len(variables) == 11
    assert [name for name in sorted(flags | variables) if name not in usage] == []


def test_the_valve_tables_name_every_valve_with_its_default():
    valves = Pipe.Valves()
    admin = table_rows("valve")
    user = table_rows("user valve")

    defaults = {
        name.strip("` "): row[1].strip("`")
        for row in admin
        for name in row[0].split(",")
    }

    assert set(defaults) == set(Pipe.Valves.model_fields)
    assert {row[0].strip("`") for row in user} == set(Pipe.UserValves.model_fields)
    assert defaults["gateway_url"] == valves.gateway_url
    assert float(defaults["timeout"]) == valves.timeout
    assert defaults["max_display_bytes"] == "10 MiB"
    assert valves.max_display_bytes == 10 * 1024 * 1024
    assert {
        name: getattr(valves, name)
        for name, default in defaults.items()
        if default == "empty"
    } == dict.fromkeys(
        [
            "gateway_key",
            "files_url",
            "files_key",
            "models",
            "skip_models",
            "open_webui_url",
            "follow_url",
        ],
        "",
    )


def test_the_quoted_open_webui_settings_are_the_demo_stacks(tmp_path):
    (block,) = re.findall(r"```text\n(OFFLINE_MODE.*?)```", PAGE, re.S)
    quoted = dict(re.findall(r"([A-Z][A-Z_]*)=(<[^>]*>|\S+)", block))
    open_webui, _functions = open_webui_services(
        state_dir=tmp_path,
        open_webui_bin=tmp_path / "open-webui",
        host="127.0.0.1",
        port=8080,
        gateway_url="http://127.0.0.1:4000/v1",
        gateway_key="<LiteLLM UI key>",
        files_url=None,
        files_key=None,
        after=(),
    )

    # The data folder and the generated secret are the stack's own business;
    # the model choice and the first screen are described in prose.
    demo_only = {"DATA_DIR", "WEBUI_SECRET_KEY", *model_choice_env(())}
    stack = {
        name: value for name, value in open_webui.env.items() if name not in demo_only
    }

    assert quoted == stack
