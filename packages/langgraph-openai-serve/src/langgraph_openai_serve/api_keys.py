"""``LGOS_API_KEYS`` and ``LGOS_GATEWAY_KEYS``: the configured bearer keys
and who holds each.

``LGOS_API_KEYS`` is either a JSON object mapping each key to a principal
(``{"sk-a": "tenant-a"}``) or a comma-separated list of keys. Its keys are
required: with it set, a request without one of them is refused.

``LGOS_GATEWAY_KEYS`` is a JSON object mapping each key of a trusted gateway
(LiteLLM in front of the UIs) to the gateway's principal. A gateway key acts
for the end user its request names in ``x-lgos-end-user``, as the Files API's
service keys act for an owner: the request's principal is then
``<gateway>.<end user>``, so each user behind the gateway is a tenant of their
own. No other key may name an end user. Gateway keys alone do not make keys
required: without ``LGOS_API_KEYS`` a request with no key (or another one)
runs anonymously, in the shared scope, as before.

Every presented key is compared with every configured key in constant time.
Settings read this module, the wire layer checks requests against it; it
imports neither.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

END_USER_HEADER = "x-lgos-end-user"
"""The header a gateway key names the end user in."""
END_USER_SEPARATOR = "."
"""Between a gateway's principal and its end user in the request's principal."""
# The same alphabet and length as the Files API's owners: a tenant's scope
# names the owner of its files (batches, the demo graphs).
_END_USER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
# No separator inside a gateway's principal: the first dot of a principal then
# always splits it into gateway and end user.
_GATEWAY_PRINCIPAL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")


class EndUserError(ValueError):
    """An ``x-lgos-end-user`` value that names no valid end user."""


@dataclass(frozen=True, slots=True)
class KeyHolder:
    """Who presented a key: its principal, and whether it is a gateway's."""

    principal: str
    gateway: bool = False

    def acting_for(self, end_user: str) -> str:
        """The principal of ``end_user`` behind this gateway.

        Raises:
            EndUserError: ``end_user`` is not 1-64 letters, digits, ``_``,
                ``.`` or ``-`` starting with a letter or digit.
        """
        if not _END_USER.fullmatch(end_user):
            raise EndUserError(
                f"{END_USER_HEADER} must be 1-64 letters, digits, '_', '.' or "
                "'-', starting with a letter or digit (send a stable user id)."
            )
        return f"{self.principal}{END_USER_SEPARATOR}{end_user}"


@dataclass(frozen=True, slots=True)
class ApiKeys:
    """Configured keys, stored as digests so lookups take constant time."""

    digests: tuple[tuple[bytes, str], ...]
    """``LGOS_API_KEYS``: the clients' keys and their principals."""
    gateway_digests: tuple[tuple[bytes, str], ...] = ()
    """``LGOS_GATEWAY_KEYS``: the gateways' keys and their principals."""

    @classmethod
    def parse(cls, value: str | None = None, *, gateways: str | None = None) -> ApiKeys:
        """Read ``LGOS_API_KEYS`` (``value``) and ``LGOS_GATEWAY_KEYS``.

        Raises:
            ValueError: a value is empty or not a valid key list or mapping, a
                key is both a client's and a gateway's, or a client's
                principal could be mistaken for a gateway's end user.
        """
        clients = cls.principals(value) if value is not None else {}
        gateway_keys = cls.gateway_principals(gateways) if gateways is not None else {}
        if set(clients) & set(gateway_keys):
            raise ValueError("a key cannot be both in LGOS_API_KEYS and a gateway's")
        for principal in set(clients.values()):
            gateway = principal.partition(END_USER_SEPARATOR)[0]
            if principal != gateway and gateway in gateway_keys.values():
                raise ValueError(
                    f"the principal {principal!r} of LGOS_API_KEYS looks like an "
                    f"end user of the gateway {gateway!r}: rename it"
                )
        return cls(
            tuple((_digest(key), principal) for key, principal in clients.items()),
            tuple((_digest(key), principal) for key, principal in gateway_keys.items()),
        )

    @staticmethod
    def principals(value: str) -> dict[str, str]:
        """Each key of an ``LGOS_API_KEYS`` value and its principal (a key of
        a plain list is its own principal, ``key-`` and a digest of it), for
        a deployment that gives another service the same tenants.

        Raises:
            ValueError: the value is empty or not a valid key list or mapping.
        """
        text = value.strip()
        mapping: Mapping[str, str]
        if text.startswith("{"):
            mapping = _key_mapping(text, "LGOS_API_KEYS")
        else:
            keys = [key.strip() for key in text.split(",") if key.strip()]
            mapping = {key: f"key-{_digest(key).hex()[:12]}" for key in keys}
        if not mapping:
            raise ValueError("LGOS_API_KEYS holds no key")
        return dict(mapping)

    @staticmethod
    def gateway_principals(value: str) -> dict[str, str]:
        """Each key of an ``LGOS_GATEWAY_KEYS`` value (a JSON object) and the
        principal of its gateway.

        Raises:
            ValueError: the value is not a non-empty mapping of keys to
                principals of 1-32 letters, digits, ``_`` or ``-``.
        """
        mapping = _key_mapping(value.strip(), "LGOS_GATEWAY_KEYS")
        if not mapping:
            raise ValueError("LGOS_GATEWAY_KEYS holds no key")
        for principal in mapping.values():
            if not _GATEWAY_PRINCIPAL.fullmatch(principal):
                raise ValueError(
                    f"gateway principal {principal!r} must be 1-32 letters, "
                    "digits, '_' or '-' (it starts each end user's scope)"
                )
        return dict(mapping)

    @property
    def required(self) -> bool:
        """Whether a request needs a key (``LGOS_API_KEYS`` is set)."""
        return bool(self.digests)

    def holder_for(self, presented: str) -> KeyHolder | None:
        """Who holds ``presented``, or ``None``; never short-circuits."""
        candidate = _digest(presented)
        found: KeyHolder | None = None
        for digest, principal in self.digests:
            if hmac.compare_digest(candidate, digest):
                found = KeyHolder(principal)
        for digest, principal in self.gateway_digests:
            if hmac.compare_digest(candidate, digest):
                found = KeyHolder(principal, gateway=True)
        return found

    def principal_for(self, presented: str) -> str | None:
        """The principal of ``presented``, or ``None``; never short-circuits."""
        holder = self.holder_for(presented)
        return holder.principal if holder is not None else None


def _key_mapping(text: str, setting: str) -> dict[str, str]:
    try:
        loaded = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{setting} is not valid JSON: {exc}") from None
    if not isinstance(loaded, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and k and v for k, v in loaded.items()
    ):
        raise ValueError(f"{setting} must map non-empty keys to principals")
    return loaded


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()
