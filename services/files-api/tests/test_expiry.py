"""expires_after: gone from the API the moment it expires; the sweep frees S3."""

from __future__ import annotations

import time

import openai
import pytest
from openai import OpenAI


def test_expired_file_disappears_at_once_and_the_sweep_deletes_its_bytes(
    client: OpenAI, tenant, bucket, eventually
) -> None:
    keeper = client.files.create(file=("keep.txt", b"stays"), purpose="user_data")
    brief = client.files.create(
        file=("brief.txt", b"short-lived"),
        purpose="user_data",
        expires_after={"anchor": "created_at", "seconds": 2},
    )
    assert brief.expires_at == brief.created_at + 2
    assert client.files.retrieve(brief.id).id == brief.id
    assert any(brief.id in key for key in bucket.owner_keys(tenant.owner))

    # Expiry is checked on every read: no waiting for a sweep.
    time.sleep(max(0.0, brief.expires_at - time.time()))
    with pytest.raises(openai.NotFoundError):
        client.files.retrieve(brief.id)
    with pytest.raises(openai.NotFoundError):
        client.files.content(brief.id)
    with pytest.raises(openai.NotFoundError):
        client.files.delete(brief.id)
    assert [f.id for f in client.files.list()] == [keeper.id]

    # The sweep (every 0.3 s here) removes bytes, metadata and marker.
    eventually(
        lambda: not any(brief.id in key for key in bucket.object_keys()),
        what="the sweep to delete the expired file's objects",
    )
    assert client.files.content(keeper.id).read() == b"stays"
    assert any(keeper.id in key for key in bucket.owner_keys(tenant.owner))


def test_deleting_an_expiring_file_removes_its_expiry_marker(
    client: OpenAI, bucket
) -> None:
    created = client.files.create(
        file=("later.txt", b"x"),
        purpose="user_data",
        expires_after={"anchor": "created_at", "seconds": 3600},
    )
    assert any(key.endswith(created.id) for key in bucket.object_keys("expiry/"))

    client.files.delete(created.id)

    assert not any(created.id in key for key in bucket.object_keys())
