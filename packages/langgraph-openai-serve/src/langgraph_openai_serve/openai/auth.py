"""Optional bearer API keys for the OpenAI routes: the bearer token of a
request and the principal it authenticated (the keys are ``api_keys``)."""

from __future__ import annotations

from starlette.requests import Request

from langgraph_openai_serve.batches.dispatch import INTERNAL_SCOPE_KEY

PRINCIPAL_STATE_KEY = "lgos_principal"


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header."""
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def internal_scope(request: Request) -> str | None:
    """The scope an in-process caller runs ``request`` in, if any."""
    value = request.scope.get("state", {}).get(INTERNAL_SCOPE_KEY)
    return value if isinstance(value, str) else None


def request_principal(request: Request) -> str | None:
    """The principal whose API key authenticated ``request`` (``None`` when
    the server runs without keys, or the request came without one where keys
    are not required); for a gateway key acting for an end user,
    ``<gateway>.<end user>``. Use it in a ``checkpoint_scope`` resolver to
    isolate tenants."""
    value = request.scope.get("state", {}).get(PRINCIPAL_STATE_KEY)
    return value if isinstance(value, str) else None
