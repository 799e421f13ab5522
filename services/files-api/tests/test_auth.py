"""Bearer keys resolve to owners; anything else is an authentication error."""

from __future__ import annotations

import pytest
from lgos_files_api.auth import KeyRing
from lgos_files_api.errors import AuthenticationError

RING = KeyRing({"sk-alice": "alice", "sk-alice-new": "alice", "sk-bob": "bob"})


@pytest.mark.parametrize(
    ("header", "owner"),
    [
        ("Bearer sk-alice", "alice"),
        ("bearer sk-alice-new", "alice"),
        ("Bearer   sk-bob  ", "bob"),
    ],
)
def test_known_keys_resolve_to_their_owner(header: str, owner: str) -> None:
    assert RING.owner_of(header) == owner


@pytest.mark.parametrize("header", [None, "", "Bearer", "Bearer ", "Basic sk-bob"])
def test_missing_key_is_refused_without_a_code(header: str | None) -> None:
    with pytest.raises(AuthenticationError) as raised:
        RING.owner_of(header)

    assert raised.value.code is None
    assert "didn't provide an API key" in raised.value.message


@pytest.mark.parametrize("header", ["Bearer sk-alic", "Bearer sk-alice2", "Bearer x"])
def test_unknown_key_is_refused_as_invalid(header: str) -> None:
    with pytest.raises(AuthenticationError) as raised:
        RING.owner_of(header)

    assert raised.value.code == "invalid_api_key"
