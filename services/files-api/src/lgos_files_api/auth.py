"""Who is calling: bearer API keys, each mapped to the owner it acts for.

A service key (``LGOS_FILES_SERVICE_KEYS``) belongs to no owner: it acts for
the owner its request names in ``X-Lgos-Owner``. LGOS's Batch API uses one to
read a tenant's input file and write the tenant's results; only services
write files of a service purpose (``batch_output``).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from lgos_files_api.errors import AuthenticationError, InvalidRequestError
from lgos_files_api.settings import OWNER_PATTERN

OWNER_HEADER = "x-lgos-owner"

_MISSING_KEY = (
    "You didn't provide an API key. You need to provide your API key in an "
    "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
)
# A service key is stored under this marker instead of an owner.
_SERVICE = object()


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


@dataclass(frozen=True, slots=True)
class Caller:
    owner: str
    service: bool = False
    """A service key acting for ``owner`` (it may write service purposes)."""


class KeyRing:
    """The configured keys; answers which owner a request's key acts for."""

    def __init__(
        self, keys: Mapping[str, str], service_keys: Collection[str] = ()
    ) -> None:
        # Digests compare in constant time whatever the key lengths are.
        entries: list[tuple[bytes, object]] = [
            (_digest(key), owner) for key, owner in keys.items()
        ]
        entries += [(_digest(key), _SERVICE) for key in service_keys]
        self._keys = tuple(entries)

    def owner_of(self, authorization: str | None) -> str:
        """The owner for an ``Authorization`` header, or ``AuthenticationError``."""
        return self.caller(authorization, None).owner

    def caller(self, authorization: str | None, acting_for: str | None) -> Caller:
        """Who calls with ``authorization``; a service key acts for the owner
        ``acting_for`` names (``X-Lgos-Owner``), which an owner's key may not
        send."""
        scheme, _, token = (authorization or "").strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise AuthenticationError(_MISSING_KEY)
        presented = _digest(token)
        found: object | None = None
        # No early exit: every key is compared, so timing says nothing of which.
        for digest, candidate in self._keys:
            if hmac.compare_digest(digest, presented):
                found = candidate
        if found is None:
            raise AuthenticationError(
                "Incorrect API key provided.", code="invalid_api_key"
            )
        if found is not _SERVICE:
            assert isinstance(found, str)
            if acting_for is not None:
                raise AuthenticationError(
                    "Only a service key may act for an owner (X-Lgos-Owner).",
                    code="invalid_api_key",
                )
            return Caller(found)
        if acting_for is None or not OWNER_PATTERN.fullmatch(acting_for):
            raise InvalidRequestError(
                "A service key acts for the owner named in the X-Lgos-Owner "
                f"header, which must match {OWNER_PATTERN.pattern}.",
                param="X-Lgos-Owner",
            )
        return Caller(acting_for, service=True)
