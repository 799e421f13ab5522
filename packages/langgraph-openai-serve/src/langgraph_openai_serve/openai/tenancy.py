"""The scope each request runs in: LGOS's tenant boundary.

Everything LGOS keeps between requests lives inside a scope: interrupt
checkpoints and paused runs, background Responses, their streams and their
idempotency keys. A request only ever reaches what its own scope holds, and
anything else answers exactly like an id that never existed.

Secure by default: with ``LGOS_API_KEYS`` set, each key's principal is its own
scope (without keys every request shares ``"default"``), and each end user a
gateway key acts for (``LGOS_GATEWAY_KEYS``) is ``<gateway>.<end user>``.
``LGOS_CHECKPOINT_SCOPE``
names another resolver (``module:callable``) or, explicitly, ``none``: one
shared scope for every caller. A ``checkpoint_scope`` passed in code wins.
"""

from __future__ import annotations

import importlib

from starlette.requests import Request

from langgraph_openai_serve.graph.errors import GraphConfigurationError
from langgraph_openai_serve.openai.auth import request_principal
from langgraph_openai_serve.openai.state import CheckpointScope

SHARED_SCOPE = "default"
NO_SCOPE_SETTING = "none"


def principal_scope(request: Request) -> str:
    """The principal of the request's API key; ``"default"`` without keys."""
    return request_principal(request) or SHARED_SCOPE


def shared_scope(_request: Request) -> str:
    """One scope for every caller (``LGOS_CHECKPOINT_SCOPE=none``)."""
    return SHARED_SCOPE


def scope_resolver(setting: str | None) -> CheckpointScope:
    """The resolver ``LGOS_CHECKPOINT_SCOPE`` chooses, imported once at build.

    Raises:
        GraphConfigurationError: the setting names nothing callable.
    """
    if setting is None:
        return principal_scope
    if setting.strip().lower() == NO_SCOPE_SETTING:
        return shared_scope
    module_name, _, attribute = setting.partition(":")
    if not module_name or not attribute:
        raise GraphConfigurationError(
            "LGOS_CHECKPOINT_SCOPE must be 'module:callable' or 'none', "
            f"not {setting!r}."
        )
    try:
        target = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise GraphConfigurationError(
            f"LGOS_CHECKPOINT_SCOPE={setting!r} cannot be loaded: {exc}"
        ) from exc
    if not callable(target):
        raise GraphConfigurationError(
            f"LGOS_CHECKPOINT_SCOPE={setting!r} is not callable."
        )
    resolver: CheckpointScope = target
    return resolver
