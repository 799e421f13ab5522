"""LiteLLM's ``custom_auth`` for the LGOS gateway: who may call it, and who
may name the end user a request is for.

Without a database LiteLLM knows only its master key, and answers any other
key with ``400 No connected db.``. This file is not imported by LGOS: the
native stack copies it beside LiteLLM's ``config.yaml`` and compose mounts it
beside the gateway configuration, whose ``general_settings.custom_auth:
lgos_gateway_auth.user_api_key_auth`` makes LiteLLM call it before its own
checks. It depends on nothing but FastAPI and LiteLLM itself.

- The master key is handed back to LiteLLM's own checks unchanged (returning
  the key as a string means "carry on with this key"): the operator's key.
- A UI key (``LGOS_GATEWAY_UI_KEYS``, comma-separated) is what the UIs hold
  (Open WebUI, its LGOS Function, Chainlit): it lists models and runs graphs
  (``/v1/models``, ``/model/info``, Chat Completions, Responses, embeddings,
  the follow route) and nothing else, so a user who reads it (Open WebUI's
  valves are readable by every user while ``WEBUI_AUTH=False``) cannot
  administer the gateway.
- The end user a request is for travels in ``x-lgos-end-user``, which the
  gateway forwards to LGOS, where its key acts for that user. Only the master
  key and UI keys may send it (the UIs state who their signed-in user is);
  any other key, a virtual key of a gateway with a database included, is
  refused with 403, so a direct client cannot claim another user's tenant.
- With a database (``DATABASE_URL`` set) virtual keys exist: other keys go to
  LiteLLM's checks.
- Anything else is refused with 401 and a message that says which key the
  gateway wants, without echoing the key sent.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets

from fastapi import HTTPException, Request

WRONG_KEY = (
    "Invalid API key for the LGOS gateway (LiteLLM): send its master key, "
    "LITELLM_MASTER_KEY, or a UI key, LGOS_GATEWAY_UI_KEYS (the native stack "
    "generates both into .state/litellm/; compose reads them from compose/.env)."
)
NO_KEY = (
    "No API key: the LGOS gateway (LiteLLM) wants its master key as "
    "'Authorization: Bearer <LITELLM_MASTER_KEY>', or a UI key "
    "(LGOS_GATEWAY_UI_KEYS) from the UIs."
)
NOT_FOR_UI_KEYS = (
    "A UI key (LGOS_GATEWAY_UI_KEYS) lists models and runs graphs only; this "
    "route needs the gateway's master key."
)
END_USER_REFUSED = (
    "Only the gateway's master key or a UI key (LGOS_GATEWAY_UI_KEYS) may name "
    "the end user a request is for (x-lgos-end-user)."
)
UI_KEYS_ENV = "LGOS_GATEWAY_UI_KEYS"
END_USER_HEADER = "x-lgos-end-user"
# The routes a UI uses, with and without LiteLLM's /v1 prefix, and the
# stack's follow route to LGOS's Responses API.
_UI_ROUTES = re.compile(
    r"/(?:v1/)?(?:models(?:/[^/]+)?|model/info|chat/completions|embeddings"
    r"|responses(?:/.*)?)|/lgos/v1/responses(?:/.*)?",
    re.DOTALL,
)


async def user_api_key_auth(request: Request, api_key: str | None) -> object:
    """The key to carry on with, a UI key's identity, or ``HTTPException``."""
    master = os.environ.get("LITELLM_MASTER_KEY", "")
    is_master = bool(master and api_key and _same(api_key, master))
    ui_key = bool(api_key) and not is_master and _is_ui_key(api_key or "")
    if _names_end_user(request) and not (is_master or ui_key):
        raise HTTPException(status_code=403, detail=END_USER_REFUSED)
    if is_master:
        return api_key
    if ui_key:
        if not _UI_ROUTES.fullmatch(request.url.path):
            raise HTTPException(status_code=403, detail=NOT_FOR_UI_KEYS)
        return _ui_identity(api_key or "")
    if os.environ.get("DATABASE_URL"):
        return api_key or ""
    if not api_key:
        raise HTTPException(status_code=401, detail=NO_KEY)
    raise HTTPException(status_code=401, detail=WRONG_KEY)


def _same(presented: str, expected: str) -> bool:
    return secrets.compare_digest(presented.encode(), expected.encode())


def _is_ui_key(presented: str) -> bool:
    configured = [k.strip() for k in os.environ.get(UI_KEYS_ENV, "").split(",")]
    found = False
    for key in configured:  # every key compared: timing says nothing of which
        if key and _same(presented, key):
            found = True
    return found


def _names_end_user(request: Request) -> bool:
    # Also LiteLLM's pass-through spelling, ``x-pass-x-lgos-end-user``, which
    # it forwards to LGOS as ``x-lgos-end-user``.
    return any(END_USER_HEADER in name.lower() for name in request.headers)


def _ui_identity(key: str) -> object:
    from litellm.proxy._types import LitellmUserRoles, UserAPIKeyAuth

    return UserAPIKeyAuth(
        api_key=hashlib.sha256(key.encode()).hexdigest(),
        key_alias="lgos-ui",
        user_role=LitellmUserRoles.INTERNAL_USER,
    )
