"""``DEMO_*`` settings are read when a process starts, never at import."""

from __future__ import annotations

import subprocess
import sys

import pytest
from lgos_demos.registry import build_registry
from lgos_demos.settings import DemoSettings
from pydantic import ValidationError

PROBE = """
import lgos_demos.app, lgos_demos.registry, lgos_demos.demo_model.app
import lgos_demos.search.app, lgos_stack.services
print("imported")
"""


def test_importing_the_demos_reads_no_settings(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={"DEMO_MODEL_BASE_URL": "not a url", "PATH": ""},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.stdout.strip() == "imported", result.stderr


def test_bad_settings_fail_when_the_registry_is_built(monkeypatch):
    monkeypatch.setenv("DEMO_SEARCH_URL", "ftp://search")

    with pytest.raises(ValidationError, match="SEARCH_URL"):
        build_registry()


def test_settings_point_every_graph_at_the_configured_services():
    settings = DemoSettings(
        MODEL_BASE_URL="https://provider.example/v1/",
        MODEL_NAME="gpt-x",
        SEARCH_URL="https://searx.example",
    )

    registry = build_registry(settings)

    assert settings.MODEL_BASE_URL == "https://provider.example/v1"
    assert set(registry.registry) == {
        "simple",
        "citations",
        "server-tools",
        "web-search",
        "file-display",
        "router",
        "structured",
        "interrupts",
        "background",
    }
