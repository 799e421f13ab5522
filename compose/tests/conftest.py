"""Shared fixtures of the compose tests; the helpers are in compose_support.py."""

from __future__ import annotations

from typing import Any

import pytest
from compose_support import Member, resolved_config, workspace_members


@pytest.fixture(scope="session")
def config() -> dict[str, Any]:
    """compose.yaml resolved by ``docker-compose config`` with .env.example."""
    return resolved_config()


@pytest.fixture(scope="session")
def services(config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    result: dict[str, dict[str, Any]] = config["services"]
    return result


@pytest.fixture(scope="session")
def members() -> dict[str, Member]:
    return workspace_members()
