"""``LGOS_API_KEYS``: the configured bearer keys and the principal of each.

The value is either a JSON object mapping each key to a principal
(``{"sk-a": "tenant-a"}``) or a comma-separated list of keys. Every
presented key is compared with every configured key in constant time.
Settings read it, the wire layer checks requests against it; it imports
neither.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ApiKeys:
    """Configured keys, stored as digests so lookups take constant time."""

    digests: tuple[tuple[bytes, str], ...]

    @classmethod
    def parse(cls, value: str) -> ApiKeys:
        """Read ``LGOS_API_KEYS``.

        Raises:
            ValueError: the value is empty or not a valid key list or mapping.
        """
        mapping = cls.principals(value)
        return cls(
            tuple((_digest(key), principal) for key, principal in mapping.items())
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
            loaded = json.loads(text)
            if not isinstance(loaded, dict) or not all(
                isinstance(k, str) and isinstance(v, str) and k and v
                for k, v in loaded.items()
            ):
                raise ValueError("LGOS_API_KEYS must map non-empty keys to principals")
            mapping = loaded
        else:
            keys = [key.strip() for key in text.split(",") if key.strip()]
            mapping = {key: f"key-{_digest(key).hex()[:12]}" for key in keys}
        if not mapping:
            raise ValueError("LGOS_API_KEYS holds no key")
        return dict(mapping)

    def principal_for(self, presented: str) -> str | None:
        """The principal of ``presented``, or ``None``; never short-circuits."""
        candidate = _digest(presented)
        found: str | None = None
        for digest, principal in self.digests:
            if hmac.compare_digest(candidate, digest):
                found = principal
        return found


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()
