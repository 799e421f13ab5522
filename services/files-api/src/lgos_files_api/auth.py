"""Who is calling: bearer API keys, each mapped to the owner it acts for."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

from lgos_files_api.errors import AuthenticationError

_MISSING_KEY = (
    "You didn't provide an API key. You need to provide your API key in an "
    "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
)


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


class KeyRing:
    """The configured keys; answers which owner a request's key belongs to."""

    def __init__(self, keys: Mapping[str, str]) -> None:
        # Digests compare in constant time whatever the key lengths are.
        self._keys = tuple((_digest(key), owner) for key, owner in keys.items())

    def owner_of(self, authorization: str | None) -> str:
        """The owner for an ``Authorization`` header, or ``AuthenticationError``."""
        scheme, _, token = (authorization or "").strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise AuthenticationError(_MISSING_KEY)
        presented = _digest(token)
        owner: str | None = None
        # No early exit: every key is compared, so timing says nothing of which.
        for digest, candidate in self._keys:
            if hmac.compare_digest(digest, presented):
                owner = candidate
        if owner is None:
            raise AuthenticationError(
                "Incorrect API key provided.", code="invalid_api_key"
            )
        return owner
