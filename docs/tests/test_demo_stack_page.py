"""The demo stack page names the ports, flags and commands the stack has."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from lgos_stack.services import StackOptions

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "demo-stack.md").read_text()

# The services table's names -> the StackOptions field holding each port.
PORT_OPTIONS = {
    "Chainlit": "chainlit_port",
    "Open WebUI": "open_webui_port",
    "LiteLLM": "litellm_port",
    "demo API": "port",
    "PostgreSQL": "postgres_port",
    "Files API": "files_port",
    "S3 storage": "s3_port",
    "demo model": "model_port",
    "search": "search_port",
    "Prometheus": "prometheus_port",
}

# The compose mode's commands quote docker compose's own flags.
DOCKER_COMPOSE_FLAGS = {"--build", "--env-file", "--rm"}


def services_table() -> dict[str, list[str]]:
    rows = {}
    for line in PAGE.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) == 5 and cells[0] not in {"service", "---"}:
            rows[cells[0]] = cells
    return rows


def test_every_port_on_the_page_is_the_stacks_default():
    defaults = StackOptions(state_dir=Path(".state"))
    table = services_table()

    shown = {name: table[name][3] for name in PORT_OPTIONS}

    assert shown == {
        name: str(getattr(defaults, field)) for name, field in PORT_OPTIONS.items()
    }
    assert set(table) - set(PORT_OPTIONS) == {
        "Open WebUI functions",
        "model sync",
        "background worker",
        "database setup",
        "Grafana",  # compose only: the native stack has no port for it
    }


def test_every_flag_on_the_page_is_one_lgos_demo_stack_takes():
    command = shutil.which("lgos-demo-stack")
    assert command is not None
    usage = subprocess.run(
        [command, "--help"], capture_output=True, text=True, check=True
    ).stdout

    flags = set(re.findall(r"(--[a-z][a-z-]+)", PAGE)) - DOCKER_COMPOSE_FLAGS

    assert flags
    assert [flag for flag in sorted(flags) if flag not in usage] == []


def test_every_just_command_on_the_page_is_a_recipe():
    just = shutil.which("just")
    assert just is not None
    recipes = subprocess.run(
        [just, "--summary"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()

    commands = set(re.findall(r"`(?:uv run )?just ([a-z-]+)", PAGE))

    assert {"up", "down", "logs", "status", "sync-models"} <= commands
    assert [command for command in sorted(commands) if command not in recipes] == []
