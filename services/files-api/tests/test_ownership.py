"""Every file belongs to its uploader's owner; other owners cannot tell it exists."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import openai
import pytest
from openai import OpenAI


def test_another_owner_never_sees_or_touches_a_file(
    make_client: Callable[..., OpenAI], new_tenant
) -> None:
    alice = make_client(new_tenant())
    mallory = make_client(new_tenant())
    mine = alice.files.create(file=("secret.txt", b"alice only"), purpose="user_data")

    assert [f.id for f in mallory.files.list()] == []
    with pytest.raises(openai.NotFoundError):
        mallory.files.retrieve(mine.id)
    with pytest.raises(openai.NotFoundError):
        mallory.files.content(mine.id)
    with pytest.raises(openai.NotFoundError):
        mallory.files.delete(mine.id)

    # Mallory's attempts changed nothing for Alice.
    assert [f.id for f in alice.files.list()] == [mine.id]
    assert alice.files.content(mine.id).read() == b"alice only"


def test_keys_of_the_same_owner_share_files(launch) -> None:
    # Two keys mapped to one owner (key rotation) see the same files.
    rotated = launch(API_KEYS='{"old-key": "team-a", "new-key": "team-a"}')
    with (
        OpenAI(api_key="old-key", base_url=f"{rotated.url}/v1", max_retries=0) as old,
        OpenAI(api_key="new-key", base_url=f"{rotated.url}/v1", max_retries=0) as new,
    ):
        created = old.files.create(file=("shared.txt", b"team"), purpose="user_data")

        assert new.files.retrieve(created.id).id == created.id
        assert [f.id for f in new.files.list()] == [created.id]


def test_owner_of_a_file_is_404_for_others_in_raw_http(
    http: httpx.Client, new_tenant
) -> None:
    owner, other = new_tenant(), new_tenant()
    created = http.post(
        "/v1/files",
        headers=owner.headers,
        files={"file": ("a.txt", b"a")},
        data={"purpose": "user_data"},
    ).json()

    response = http.get(
        f"/v1/files/{created['id']}",
        headers=other.headers,
    )

    assert response.status_code == 404
    assert response.json()["error"]["param"] == "id"
