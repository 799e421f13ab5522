"""What a user of the compose stack would notice, checked on the file as
Compose resolves it: pinned images, healthchecks, start order, builds of real
workspace members, every setting listed, no secret committed.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml
from compose_support import (
    COMPOSE_DIR,
    COMPOSE_FILE,
    REPO_ROOT,
    VARIABLE_USE,
    Member,
    env_example,
    installed_scripts,
    is_one_shot,
    normalize,
    secret_names,
)

Services = dict[str, dict[str, Any]]

PENDING_MEMBERS = {
    "lgos-open-webui": "services/open-webui, built on the `openwebui` branch",
}
"""Members compose already builds that land in the workspace with another
branch. Once the member exists it is checked like every other."""

LEAF_JOBS = {
    "open-webui-functions": "installs the LGOS Function into a running Open WebUI",
}
"""One-shot jobs nothing waits for: they finish the stack, nothing needs them."""

GATEWAY_AUTH = REPO_ROOT / "packages/lgos-stack/src/lgos_stack/lgos_gateway_auth.py"
"""The native stack copies it beside LiteLLM's configuration; compose mounts it."""

_PINNED_TAG = re.compile(r"^[^@]+:(?P<tag>[^:/@]+)$")


def _tag(image: str) -> str | None:
    match = _PINNED_TAG.match(image)
    return match.group("tag") if match else None


def test_every_pulled_image_is_pinned_to_a_release(services: Services) -> None:
    loose = {}
    for name, service in services.items():
        if "build" in service:
            continue
        tag = _tag(service["image"])
        if tag is None or tag == "latest" or not re.search(r"\d", tag):
            loose[name] = service["image"]

    assert loose == {}


def test_every_base_image_of_the_dockerfile_is_pinned() -> None:
    dockerfile = (COMPOSE_DIR / "Dockerfile").read_text(encoding="utf-8")
    defaults = dict(re.findall(r"^ARG (\w+)=(\S+)$", dockerfile, re.MULTILINE))
    bases = re.findall(r"^FROM (\S+)", dockerfile, re.MULTILINE)
    images = [defaults.get(base.strip("${}"), base) for base in bases]
    stages = set(re.findall(r"^FROM \S+ AS (\w+)", dockerfile, re.MULTILINE))
    pulled = [image for image in images if image not in stages]

    assert pulled, "no FROM line found"
    assert all(re.fullmatch(r"[^:]+:\d[\w.-]*", image) for image in pulled), pulled


def test_workspace_images_are_built_here_not_pulled(services: Services) -> None:
    built = {name: s["image"] for name, s in services.items() if "build" in s}

    assert built, "no service is built from the workspace"
    assert all(image.startswith("lgos/") for image in built.values()), built
    assert all(image.endswith(":local") for image in built.values()), built


def test_every_long_running_service_has_a_healthcheck(services: Services) -> None:
    missing = [
        name
        for name, service in services.items()
        if not is_one_shot(service)
        and (
            not service.get("healthcheck", {}).get("test")
            or service["healthcheck"].get("disable")
        )
    ]

    assert missing == []


def test_services_wait_for_health_or_completion(services: Services) -> None:
    wrong = {}
    for name, service in services.items():
        for dependency, rule in service.get("depends_on", {}).items():
            expected = (
                "service_completed_successfully"
                if is_one_shot(services[dependency])
                else "service_healthy"
            )
            if rule["condition"] != expected:
                wrong[f"{name} -> {dependency}"] = rule["condition"]

    assert wrong == {}


def test_every_one_shot_job_is_awaited_before_its_dependants(
    services: Services,
) -> None:
    jobs = {name for name, service in services.items() if is_one_shot(service)}
    awaited = {
        dependency
        for service in services.values()
        for dependency in service.get("depends_on", {})
    }

    assert jobs - awaited == set(LEAF_JOBS)
    assert {"minio-setup", "db-setup", "model-sync"} <= jobs & awaited


def _mounted_configs(
    config: dict[str, Any], service: dict[str, Any]
) -> dict[str, Path]:
    """Where each of ``service``'s compose configs appears, and its file."""
    return {
        used["target"]: Path(config["configs"][used["source"]]["file"])
        for used in service.get("configs", [])
    }


def test_litellm_starts_after_the_model_sync_wrote_its_config(
    config: dict[str, Any], services: Services
) -> None:
    litellm, sync = services["litellm"], services["model-sync"]
    written = next(v for v in sync["volumes"] if v["source"] == "litellm-config")
    read = next(v for v in litellm["volumes"] if v["source"] == "litellm-config")
    config_path = sync["command"][sync["command"].index("--config") + 1]
    litellm_config = litellm["command"][litellm["command"].index("--config") + 1]
    gateway = _mounted_configs(config, litellm)[litellm_config]
    included = yaml.safe_load(gateway.read_text())["include"]

    assert litellm["depends_on"]["model-sync"]["condition"] == (
        "service_completed_successfully"
    )
    assert config_path.startswith(written["target"] + "/")
    assert read.get("read_only") is True
    # LiteLLM reads the gateway's configuration, which includes the synced one.
    assert [str(PurePosixPath(litellm_config).parent / i) for i in included] == [
        read["target"] + config_path.removeprefix(written["target"])
    ]


def test_litellm_gets_the_gateway_auth_beside_its_configuration(
    config: dict[str, Any], services: Services
) -> None:
    litellm = services["litellm"]
    path = litellm["command"][litellm["command"].index("--config") + 1]
    mounted = _mounted_configs(config, litellm)
    gateway = yaml.safe_load(mounted[path].read_text())
    module, _, function = gateway["general_settings"]["custom_auth"].rpartition(".")
    auth = mounted[str(PurePosixPath(path).parent / f"{module}.py")]

    assert auth == GATEWAY_AUTH
    assert f"async def {function}(" in auth.read_text()
    for callback in gateway["litellm_settings"]["callbacks"]:
        module, _, instance = callback.rpartition(".")
        if not module:  # one of LiteLLM's own (prometheus), not a file of ours
            continue
        mounted_module = mounted[str(PurePosixPath(path).parent / f"{module}.py")]
        assert f"\n{instance} = " in mounted_module.read_text()


def test_state_lives_in_named_volumes(config: dict[str, Any]) -> None:
    mounts = [
        (name, volume)
        for name, service in config["services"].items()
        for volume in service.get("volumes", [])
    ]

    assert mounts
    assert all(volume["type"] == "volume" for _, volume in mounts), mounts
    assert {volume["source"] for _, volume in mounts} == set(config["volumes"])


def _built_member(service: dict[str, Any]) -> str:
    return normalize(service["build"]["args"]["PACKAGE"])


def test_every_build_uses_our_dockerfile_on_the_workspace(services: Services) -> None:
    for name, service in services.items():
        if "build" not in service:
            continue
        build = service["build"]
        context = build["context"]
        dockerfile = REPO_ROOT / build["dockerfile"]

        assert context == str(REPO_ROOT), name
        assert dockerfile.is_file(), f"{name}: {dockerfile} does not exist"
        text = dockerfile.read_text(encoding="utf-8")
        assert 'uv sync --frozen --no-dev --no-editable --package "${PACKAGE}"' in text
        assert re.search(r"^USER (?!root)\w+", text, re.MULTILINE), "runs as root"


def test_every_build_names_a_workspace_member(
    services: Services, members: dict[str, Member]
) -> None:
    built = {_built_member(s) for s in services.values() if "build" in s}
    pending = {name for name in PENDING_MEMBERS if name not in members}

    assert built - pending <= set(members)
    assert {"lgos-demos", "lgos-files-api", "lgos-model-sync", "lgos-chainlit"} <= (
        built
    )


def test_every_built_service_runs_a_console_script_of_its_image(
    services: Services, members: dict[str, Member]
) -> None:
    unknown = {}
    for name, service in services.items():
        if "build" not in service:
            continue
        member = _built_member(service)
        script = service["command"][0]
        if member in PENDING_MEMBERS and member not in members:
            continue
        if script not in installed_scripts(member, members):
            unknown[name] = f"{script} is not a console script of {member}"

    assert unknown == {}


def test_every_healthcheck_of_a_built_service_uses_the_shipped_script(
    services: Services,
) -> None:
    dockerfile = (COMPOSE_DIR / "Dockerfile").read_text(encoding="utf-8")
    for name, service in services.items():
        if "build" in service and "healthcheck" in service:
            assert service["healthcheck"]["test"][:2] == ["CMD", "lgos-healthcheck"]
            assert "/usr/local/bin/lgos-healthcheck" in dockerfile, name


def _raw_variables() -> list[tuple[str, str | None, str]]:
    """(name, operator, default-or-message) of every ``${...}`` in compose.yaml."""
    text = COMPOSE_FILE.read_text(encoding="utf-8")
    return [
        (name, operator or None, rest or "")
        for name, operator, rest in VARIABLE_USE.findall(text)
    ]


def test_every_variable_used_is_listed_in_env_example() -> None:
    used = {name for name, _, _ in _raw_variables()}
    listed = set(env_example())

    assert used - listed == set(), "used in compose.yaml, missing in .env.example"
    assert listed - used == set(), "listed in .env.example, used nowhere"


def test_env_example_shows_the_defaults_compose_uses() -> None:
    example = env_example()
    differing = {
        name: (default, example[name])
        for name, operator, default in _raw_variables()
        if operator == ":-" and example.get(name) != default
    }

    assert differing == {}


def test_every_setting_has_a_default_or_is_a_required_secret() -> None:
    secrets = set(secret_names())
    bare = [name for name, operator, _ in _raw_variables() if operator is None]
    secret_uses = {(name, op) for name, op, _ in _raw_variables() if name in secrets}

    assert bare == []
    assert secret_uses == {(name, ":?") for name in secrets}


SECRET_NAME = re.compile(r"PASSWORD|SECRET|_KEY$|TOKEN$")
PLACEHOLDERS = {
    "DEMO_MODEL_API_KEY": "lgos-demo",  # the offline demo model accepts any key
}


def test_no_secret_value_is_committed() -> None:
    committed = {
        name: value
        for name, value in env_example().items()
        if SECRET_NAME.search(name) and value and PLACEHOLDERS.get(name) != value
    }
    text = COMPOSE_FILE.read_text(encoding="utf-8")

    # A secret-named setting in compose.yaml takes its value from a variable.
    literal = re.findall(
        r"^\s+(\w*(?:PASSWORD|SECRET|_KEY)\w*):\s*(?!.*\$\{)(\S.*)$",
        text,
        re.MULTILINE,
    )

    assert committed == {}
    assert literal == []


@pytest.mark.parametrize("secret", secret_names())
def test_secrets_reach_containers_only_through_their_variable(
    secret: str, services: Services
) -> None:
    placeholder = f"placeholder-{secret.lower()}"
    carriers = sorted(
        f"{name}.{key}"
        for name, service in services.items()
        for key, value in (service.get("environment") or {}).items()
        if value is not None and placeholder in str(value)
    )
    commands = [
        name
        for name, service in services.items()
        if placeholder in " ".join(map(str, service.get("command") or []))
    ]

    assert carriers, f"{secret} reaches no service"
    assert commands == [], "a secret on a command line shows in `docker ps`"


OPEN_WEBUI_SETTINGS = {
    # Offline (RECIPES.md "Open WebUI 0.12.4"): no downloads, no telemetry.
    "OFFLINE_MODE": "true",
    "HF_HUB_OFFLINE": "1",
    "ENABLE_OLLAMA_API": "False",
    "RAG_EMBEDDING_MODEL_AUTO_UPDATE": "False",
    "RAG_RERANKING_MODEL_AUTO_UPDATE": "False",
    "WHISPER_MODEL_AUTO_UPDATE": "False",
    "ANONYMIZED_TELEMETRY": "False",
    "DO_NOT_TRACK": "true",
    "SCARF_NO_ANALYTICS": "true",
    # The environment wins over settings saved in its database.
    "ENABLE_PERSISTENT_CONFIG": "False",
    # No extra model calls (each a demo graph run) per chat.
    "ENABLE_TITLE_GENERATION": "False",
    "ENABLE_TAGS_GENERATION": "False",
    "ENABLE_FOLLOW_UP_GENERATION": "False",
    # Every graph through LiteLLM.
    "OPENAI_API_BASE_URL": "http://litellm:4000/v1",
}


def test_open_webui_runs_offline_through_litellm_without_extra_calls(
    services: Services,
) -> None:
    environment = services["open-webui"]["environment"]

    assert services["open-webui"]["image"] == "ghcr.io/open-webui/open-webui:v0.12.4"
    assert {key: environment.get(key) for key in OPEN_WEBUI_SETTINGS} == (
        OPEN_WEBUI_SETTINGS
    )


def test_litellm_starts_offline_with_the_pinned_release(services: Services) -> None:
    litellm = services["litellm"]
    installer = (REPO_ROOT / "scripts" / "install-litellm.sh").read_text("utf-8")
    native = re.search(r'^LITELLM_VERSION="([^"]+)"$', installer, re.MULTILINE)

    assert native is not None
    assert litellm["image"] == f"ghcr.io/berriai/litellm:v{native.group(1)}"
    assert litellm["environment"]["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert litellm["environment"]["LITELLM_MASTER_KEY"] == (
        "placeholder-litellm_master_key"
    )
