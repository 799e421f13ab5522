"""Who is calling: bearer API keys, each mapped to the owner it acts for.

A service key (``LGOS_FILES_SERVICE_KEYS``) belongs to no owner: it acts for
the owner its request names in ``X-Lgos-Owner``. LGOS's Batch API uses one to
read a tenant's input file and write the tenant's results; only services
write files of a service purpose (``batch_output``).

A gateway key (``LGOS_FILES_GATEWAY_KEYS``, a UI in front of LGOS) acts for
its own gateway owner, or for the end user its request names in
``x-lgos-end-user``: the owner ``<gateway>.<end user>``, which is the scope
LGOS gives that user behind a gateway key of the same name, so the UI's
uploads are the files the graphs read as that user. It reaches no other
owner, and no other key may name an end user.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from lgos_files_api.errors import (
    AuthenticationError,
    InvalidRequestError,
    PermissionDeniedError,
)
from lgos_files_api.settings import OWNER_PATTERN

OWNER_HEADER = "x-lgos-owner"
END_USER_HEADER = "x-lgos-end-user"
# LGOS's rule for an end user behind a gateway (its api_keys.py): the owner
# is the gateway's name, a dot, and the end user.
_END_USER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")

_MISSING_KEY = (
    "You didn't provide an API key. You need to provide your API key in an "
    "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
)
# A service key is stored under this marker instead of an owner.
_SERVICE = object()


@dataclass(frozen=True, slots=True)
class _Gateway:
    """A gateway key is stored as its gateway's name."""

    name: str


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
        self,
        keys: Mapping[str, str],
        service_keys: Collection[str] = (),
        gateway_keys: Mapping[str, str] | None = None,
    ) -> None:
        # Digests compare in constant time whatever the key lengths are.
        entries: list[tuple[bytes, object]] = [
            (_digest(key), owner) for key, owner in keys.items()
        ]
        entries += [(_digest(key), _SERVICE) for key in service_keys]
        entries += [
            (_digest(key), _Gateway(name)) for key, name in (gateway_keys or {}).items()
        ]
        self._keys = tuple(entries)

    def owner_of(self, authorization: str | None) -> str:
        """The owner for an ``Authorization`` header, or ``AuthenticationError``."""
        return self.caller(authorization, None).owner

    def caller(
        self,
        authorization: str | None,
        acting_for: str | None,
        end_user: str | None = None,
    ) -> Caller:
        """Who calls with ``authorization``; a service key acts for the owner
        ``acting_for`` names (``X-Lgos-Owner``), which an owner's key may not
        send; a gateway key for the ``end_user`` it names (``x-lgos-end-user``),
        which no other key may send."""
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
        if end_user is not None and not isinstance(found, _Gateway):
            raise PermissionDeniedError(
                "Only a gateway key may act for an end user (x-lgos-end-user).",
                param=END_USER_HEADER,
            )
        if isinstance(found, _Gateway):
            if acting_for is not None:
                raise AuthenticationError(
                    "Only a service key may act for an owner (X-Lgos-Owner).",
                    code="invalid_api_key",
                )
            return Caller(_gateway_owner(found.name, end_user))
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


def _gateway_owner(gateway: str, end_user: str | None) -> str:
    if end_user is None:
        return gateway
    owner = f"{gateway}.{end_user}"
    if not _END_USER.fullmatch(end_user) or not OWNER_PATTERN.fullmatch(owner):
        raise InvalidRequestError(
            "x-lgos-end-user must be letters, digits, '_', '.' or '-', starting "
            f"with a letter or digit, and {gateway}.<end user> at most 64 "
            "characters.",
            param=END_USER_HEADER,
        )
    return owner
