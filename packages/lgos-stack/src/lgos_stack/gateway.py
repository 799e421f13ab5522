"""The stack's gateway: the model-sync one-shot, then LiteLLM on its output.

    model sync   python -m lgos_model_sync  (one-shot, after the demo API:
                 writes {state_dir}/litellm/config.yaml from the API's catalog)
    LiteLLM      .tools/litellm/bin/litellm --config that file

LiteLLM's database mode cannot start offline, so its models come from the
config file: every demo graph becomes ``lgos/<graph>``. The file is seeded
once with the master-key setting and is the user's to extend; the sync only
rewrites the entries it owns. The master key is ``LITELLM_MASTER_KEY`` when
set, else one generated once into ``{state_dir}/litellm/master-key``; a wrong
key is refused with 401 by ``lgos_gateway_auth.py``, the ``custom_auth`` the
seed names, and ``lgos_gateway_errors.py`` (a callback) passes LGOS's error
messages on readably; both are copied beside the file at each start.

One identity from the UI to LGOS: the UIs hold a UI key
(``{state_dir}/litellm/ui-key``, ``LGOS_GATEWAY_UI_KEYS``), which only lists
models and runs graphs, and name their signed-in user in ``x-lgos-end-user``;
the seed forwards that header to LGOS (``forward_client_headers_to_llm_api``,
and ``forward_headers`` on the follow route), and LiteLLM presents LGOS a
gateway key (``{state_dir}/litellm/lgos-key``, in LGOS's
``LGOS_GATEWAY_KEYS`` as ``gateway``), which acts for that user: each user is
the LGOS tenant ``gateway.<user>``. Only the master key and UI keys may name
an end user (``lgos_gateway_auth.py``). A file seeded before this gets the
settings at the next start (``add_end_user_forwarding``).

Background runs are followed through the seed's pass-through route
``/lgos/v1/responses`` (``FOLLOW_BASE_PATH``): LiteLLM cannot stream a
retrieved Response, so that path goes to LGOS's own Responses API, with the
same key check; its target comes from ``LGOS_GATEWAY_FOLLOW_TARGET``. A file
seeded before the route existed gets it at the next start (``add_follow_route``).
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Mapping
from pathlib import Path

from lgos_stack.net import reachable
from lgos_stack.supervisor import Service

DEFAULT_LITELLM_PORT = 4000
MODEL_PREFIX = "lgos"
# Keeps LiteLLM off the network at start: the cost map, beta headers, blog
# posts and presets are read from the installed package instead.
LITELLM_OFFLINE_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",
    "LITELLM_LOCAL_BLOG_POSTS": "True",
    "LITELLM_LOCAL_AUTOROUTER_PRESETS": "True",
    "LITELLM_LOCAL_POLICY_TEMPLATES": "True",
    "LITELLM_MODE": "PRODUCTION",
    "LITELLM_DONT_SHOW_FEEDBACK_BOX": "True",
}
_AUTH_LINE = "  custom_auth: lgos_gateway_auth.user_api_key_auth\n"
_FORWARD_HEADERS = (
    "      # The client's headers go along (its own key is replaced by LGOS's):\n"
    "      # x-lgos-end-user names the user LGOS's gateway key acts for.\n"
    "      forward_headers: true\n"
)
_FOLLOW_SETTINGS = (
    """\
  # Background runs followed live: LiteLLM answers
  # GET /v1/responses/{id}?stream=true with a JSON snapshot, so
  # /lgos/v1/responses is passed through to LGOS's own Responses API (the
  # event stream with starting_after, the snapshot, cancel), streamed as it
  # comes and behind the same key. Clients use LGOS's Response id there
  # (decoded from the gateway's; docs/how-to/background.md). That id is
  # readable only with LiteLLM's response-id encryption off: it separates
  # users of virtual keys, which this database-less gateway does not have;
  # LGOS keeps each user's Responses apart itself (x-lgos-end-user).
  disable_responses_id_security: true
  pass_through_endpoints:
    - path: /lgos/v1/responses
      target: os.environ/LGOS_GATEWAY_FOLLOW_TARGET
      include_subpath: true
      auth: true
"""
    + _FORWARD_HEADERS
    + """\
      headers:
        Authorization: Bearer os.environ/LGOS_API_KEY
"""
)
"""The follow route's settings (under ``general_settings``)."""
_END_USER_SETTINGS = """\
  # One identity from the UI to LGOS: the x-lgos-end-user header a UI sends
  # (its signed-in user; only the master key and UI keys may send one,
  # lgos_gateway_auth.py) goes on to LGOS with the other x- headers, and
  # LGOS's gateway key acts for that user there: each user is a tenant.
  forward_client_headers_to_llm_api: true
"""
"""The end-user forwarding setting (under ``general_settings``)."""
_SEED_CONFIG = (
    """\
# LiteLLM's configuration for the LGOS demo stack.
# lgos-model-sync rewrites only the model_list entries it owns (marked
# model_info.lgos_sync); add your own models and settings freely.
model_list: []

general_settings:
  master_key: os.environ/LITELLM_MASTER_KEY
  # A wrong key gets 401 with a readable message instead of LiteLLM's
  # "400 No connected db."; UI keys (LGOS_GATEWAY_UI_KEYS) only list models
  # and run graphs (lgos_gateway_auth.py, written beside this file).
"""
    + _AUTH_LINE
    + _FOLLOW_SETTINGS
    + _END_USER_SETTINGS
    + """
litellm_settings:
  # LGOS's own error messages instead of LiteLLM's wrapping of them
  # (lgos_gateway_errors.py, written beside this file).
  callbacks:
    - lgos_gateway_errors.readable_errors
    # LiteLLM's own metrics at /metrics/ (requests, tokens, latency, time to
    # first token per model), which Prometheus scrapes beside LGOS's.
    - prometheus

router_settings:
  # LiteLLM takes a deployment out of service after a 404 or 401, even the
  # only one of a model: one client naming an expired Response would make
  # the graph answer 429 to everyone for a while. A graph's 4xx is the
  # client's problem, and a graph that is down fails on connect anyway.
  disable_cooldowns: true
"""
)
FOLLOW_BASE_PATH = "/lgos/v1"
"""The gateway's pass-through to LGOS's Responses API, as an OpenAI base path:
``{gateway}/lgos/v1/responses/{lgos id}?stream=true`` follows a background run."""
LGOS_KEY_ENV = "LGOS_API_KEY"
"""LiteLLM's environment: the key it presents to LGOS (a gateway key there)."""
UI_KEYS_ENV = "LGOS_GATEWAY_UI_KEYS"
"""LiteLLM's environment: the UI keys its ``custom_auth`` accepts."""
GATEWAY_PRINCIPAL = "gateway"
"""LiteLLM's principal in LGOS's ``LGOS_GATEWAY_KEYS`` (and the Files API's):
the end user ``u`` behind it is the tenant ``gateway.u``."""
FOLLOW_TARGET_ENV = "LGOS_GATEWAY_FOLLOW_TARGET"
"""LiteLLM's environment: where the follow route forwards (LGOS's ``/v1/responses``)."""
AUTH_MODULE = Path(__file__).with_name("lgos_gateway_auth.py")
"""LiteLLM's ``custom_auth``, copied beside its configuration at each start."""
ERRORS_MODULE = Path(__file__).with_name("lgos_gateway_errors.py")
"""A LiteLLM callback, copied beside its configuration at each start."""


class ConfigError(ValueError):
    """A setting is wrong; the message says what to set."""


def litellm_dir(state_dir: Path) -> Path:
    return state_dir / "litellm"


def litellm_config(state_dir: Path) -> Path:
    return litellm_dir(state_dir) / "config.yaml"


def master_key_file(state_dir: Path) -> Path:
    return litellm_dir(state_dir) / "master-key"


def ui_key(state_dir: Path) -> str:
    """The UIs' key to LiteLLM, made once for the state folder."""
    return generated_secret(litellm_dir(state_dir) / "ui-key", prefix="sk-lgos-ui-")


def lgos_gateway_key(state_dir: Path) -> str:
    """LiteLLM's gateway key to LGOS, made once for the state folder."""
    return generated_secret(
        litellm_dir(state_dir) / "lgos-key", prefix="sk-lgos-gateway-"
    )


def master_key(state_dir: Path, environ: Mapping[str, str]) -> str:
    """``LITELLM_MASTER_KEY``, or the key generated once for this state folder.

    Raises:
        ConfigError: the configured key is one LiteLLM refuses.
    """
    configured = environ.get("LITELLM_MASTER_KEY")
    if configured is not None:
        if not configured.startswith("sk-") or len(configured) < 8:
            raise ConfigError(
                "LITELLM_MASTER_KEY must start with 'sk-' and be at least 8 "
                "characters (LiteLLM treats other keys as hashes); set another "
                "one, or unset it to use the key generated into "
                f"{master_key_file(state_dir)}"
            )
        return configured
    return generated_secret(master_key_file(state_dir), prefix="sk-")


def generated_secret(path: Path, *, prefix: str = "") -> str:
    """The secret kept in ``path``, made once (owner-only file)."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(prefix + secrets.token_urlsafe(32) + "\n")
    return path.read_text().strip()


def seed_config(path: Path) -> None:
    """Write LiteLLM's starting configuration unless the file exists."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_SEED_CONFIG)


def add_follow_route(path: Path) -> bool:
    """Give a configuration seeded before the follow route existed its
    settings, right after the seed's ``custom_auth`` line; whether it did.

    Only a file that still has that line once and mentions neither setting
    is changed (replaced atomically): anything else is the user's to edit
    (docs/demo-stack.md says how).
    """
    if not path.exists():
        return False
    text = path.read_text()
    if (
        text.count(_AUTH_LINE) != 1
        or "pass_through_endpoints" in text
        or "disable_responses_id_security" in text
    ):
        return False
    updated = path.with_name(f".{path.name}.follow-route")
    updated.write_text(text.replace(_AUTH_LINE, _AUTH_LINE + _FOLLOW_SETTINGS))
    os.replace(updated, path)
    return True


_FOLLOW_AUTH = "      auth: true\n      headers:\n"
_FOLLOW_END = "        Authorization: Bearer os.environ/LGOS_API_KEY\n"
_FOLLOW_FORWARD = "      auth: true\n" + _FORWARD_HEADERS + "      headers:\n"


def add_end_user_forwarding(path: Path) -> bool:
    """Give a configuration seeded before end users were forwarded the
    setting that forwards them (after the seed's follow route, else its
    ``custom_auth`` line) and, on the seed's follow route,
    ``forward_headers``; whether it did.

    Each is added only where the seed's own line is still there once and the
    setting is not (the file is replaced atomically): anything else is the
    user's to edit (docs/demo-stack.md says how).
    """
    if not path.exists():
        return False
    text = original = path.read_text()
    if text.count(_FOLLOW_AUTH) == 1 and "forward_headers" not in text:
        text = text.replace(_FOLLOW_AUTH, _FOLLOW_FORWARD)
    anchor = _FOLLOW_END if text.count(_FOLLOW_END) == 1 else _AUTH_LINE
    if text.count(anchor) == 1 and "forward_client_headers_to_llm_api" not in text:
        text = text.replace(anchor, anchor + _END_USER_SETTINGS)
    if text == original:
        return False
    updated = path.with_name(f".{path.name}.end-users")
    updated.write_text(text)
    os.replace(updated, path)
    return True


def install_gateway_modules(config_dir: Path) -> None:
    """Put the current ``lgos_gateway_auth.py`` and ``lgos_gateway_errors.py``
    beside LiteLLM's configuration (LiteLLM loads them from there)."""
    for module in (AUTH_MODULE, ERRORS_MODULE):
        (config_dir / module.name).write_text(module.read_text())


def gateway_services(
    *,
    state_dir: Path,
    api_base_url: str,
    litellm_bin: Path,
    host: str,
    port: int,
    key: str,
    after: tuple[str, ...],
) -> list[Service]:
    """The model-sync one-shot (after ``after``) and LiteLLM (after the sync).

    Both present LGOS the stack's gateway key (``LGOS_API_KEY``): the sync
    reads the catalog with it, LiteLLM sends it with every request (naming
    the end user when the UI does). ``key`` is LiteLLM's master key; the UIs
    get ``ui_key``."""
    config = litellm_config(state_dir)
    seed_config(config)
    add_follow_route(config)
    add_end_user_forwarding(config)
    install_gateway_modules(config.parent)
    deployment = f"main={MODEL_PREFIX},{api_base_url},{LGOS_KEY_ENV}"
    to_lgos = {LGOS_KEY_ENV: lgos_gateway_key(state_dir)}
    sync = Service(
        name="model sync",
        argv=[
            sys.executable,
            "-m",
            "lgos_model_sync",
            f"--config={config}",
            f"--deployment={deployment}",
        ],
        port=None,
        url=f"(one-shot: writes {config} from {api_base_url}/models)",
        env=to_lgos,
        after=after,
        oneshot=True,
    )
    base = f"http://{reachable(host)}:{port}"
    litellm = Service(
        name="LiteLLM",
        argv=[
            str(litellm_bin),
            "--config",
            str(config),
            "--host",
            host,
            "--port",
            str(port),
        ],
        port=port,
        url=f"http://{host}:{port}/v1",
        health_url=f"{base}/health/liveliness",
        env={
            **LITELLM_OFFLINE_ENV,
            "LITELLM_MASTER_KEY": key,
            UI_KEYS_ENV: ui_key(state_dir),
            FOLLOW_TARGET_ENV: f"{api_base_url}/responses",
            **to_lgos,
        },
        after=(sync.name,),
    )
    return [sync, litellm]
