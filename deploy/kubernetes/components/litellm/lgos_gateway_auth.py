"""LiteLLM's ``custom_auth`` for the LGOS gateway: a wrong key is a 401.

Without a database LiteLLM answers any key other than its master key with
``400 No connected db.`` (it would look virtual keys up there). This file
is not imported by LGOS: the native stack copies it beside LiteLLM's
``config.yaml`` and compose mounts it beside the gateway configuration, whose
``general_settings.custom_auth: lgos_gateway_auth.user_api_key_auth`` makes
LiteLLM call it before its own checks. It depends on nothing but FastAPI,
which LiteLLM ships.

- The master key is handed back to LiteLLM's own checks unchanged (returning
  the key as a string means "carry on with this key").
- With a database (``DATABASE_URL`` set) virtual keys exist: every key goes to
  LiteLLM's checks.
- Anything else is refused with 401 and a message that says which key the
  gateway wants, without echoing the key sent.
"""

from __future__ import annotations

import os
import secrets

from fastapi import HTTPException, Request

WRONG_KEY = (
    "Invalid API key for the LGOS gateway (LiteLLM): send its master key, "
    "LITELLM_MASTER_KEY (the native stack generates it into "
    ".state/litellm/master-key; compose reads it from compose/.env)."
)
NO_KEY = (
    "No API key: the LGOS gateway (LiteLLM) wants its master key as "
    "'Authorization: Bearer <LITELLM_MASTER_KEY>'."
)


async def user_api_key_auth(request: Request, api_key: str | None) -> str:
    """The key to carry on with, or ``HTTPException(401)``."""
    if os.environ.get("DATABASE_URL"):
        return api_key or ""
    master = os.environ.get("LITELLM_MASTER_KEY", "")
    if not api_key:
        raise HTTPException(status_code=401, detail=NO_KEY)
    if master and secrets.compare_digest(api_key.encode(), master.encode()):
        return api_key
    raise HTTPException(status_code=401, detail=WRONG_KEY)
