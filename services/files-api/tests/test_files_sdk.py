"""The Files API as the official OpenAI SDK uses it, end to end over S3."""

from __future__ import annotations

import io
import time

import openai
import pytest
from openai import OpenAI


def test_create_returns_an_openai_file_object(client: OpenAI) -> None:
    before = int(time.time())

    created = client.files.create(
        file=("notes.txt", b"hello files", "text/plain"), purpose="user_data"
    )

    assert created.id.startswith("file-")
    assert created.object == "file"
    assert created.bytes == len(b"hello files")
    assert created.filename == "notes.txt"
    assert created.purpose == "user_data"
    assert created.status == "processed"
    assert created.expires_at is None
    assert before <= created.created_at <= int(time.time())


def test_retrieve_content_and_delete_round_trip(client: OpenAI) -> None:
    created = client.files.create(
        file=("data.jsonl", io.BytesIO(b'{"a": 1}\n'), "application/jsonl"),
        purpose="assistants",
    )

    retrieved = client.files.retrieve(created.id)
    content = client.files.content(created.id)
    deleted = client.files.delete(created.id)

    assert retrieved == created
    assert content.read() == b'{"a": 1}\n'
    assert content.response.headers["content-type"] == "application/jsonl"
    assert deleted.id == created.id
    assert deleted.deleted is True
    assert deleted.object == "file"


def test_deleted_file_is_gone_everywhere(client: OpenAI) -> None:
    created = client.files.create(file=("gone.txt", b"x"), purpose="user_data")
    client.files.delete(created.id)

    assert [f.id for f in client.files.list()] == []
    with pytest.raises(openai.NotFoundError):
        client.files.retrieve(created.id)
    with pytest.raises(openai.NotFoundError):
        client.files.content(created.id)
    with pytest.raises(openai.NotFoundError):
        client.files.delete(created.id)


def test_content_is_served_with_the_stored_content_type(client: OpenAI) -> None:
    created = client.files.create(
        file=("page.html", b"<p>hi</p>", "text/html"), purpose="user_data"
    )

    response = client.files.content(created.id).response

    # Exactly as stored (no charset appended), as a download that never renders.
    assert response.headers["content-type"] == "text/html"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["content-disposition"].startswith("attachment")
    assert response.headers["content-length"] == str(len(b"<p>hi</p>"))


def test_missing_content_type_is_stored_as_octet_stream(client: OpenAI) -> None:
    created = client.files.create(file=("blob", b"\x00\x01"), purpose="user_data")

    response = client.files.content(created.id).response

    assert response.headers["content-type"] == "application/octet-stream"


def test_expires_after_sets_expires_at(client: OpenAI) -> None:
    created = client.files.create(
        file=("scratch.txt", b"tmp"),
        purpose="user_data",
        expires_after={"anchor": "created_at", "seconds": 3600},
    )

    assert created.expires_at == created.created_at + 3600
    assert client.files.retrieve(created.id).expires_at == created.expires_at


def test_batch_files_expire_after_thirty_days_by_default(client: OpenAI) -> None:
    created = client.files.create(file=("batch.jsonl", b"{}\n"), purpose="batch")

    assert created.expires_at == created.created_at + 30 * 24 * 3600


def test_unknown_file_id_is_404_in_the_envelope(client: OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as raised:
        client.files.retrieve("file-0123456789abcdef01234567")

    assert raised.value.body == {
        "message": "No such File object: file-0123456789abcdef01234567",
        "type": "invalid_request_error",
        "param": "id",
        "code": None,
    }


def test_malformed_file_id_is_404_not_a_path(client: OpenAI) -> None:
    with pytest.raises(openai.NotFoundError):
        client.files.retrieve("..%2F..%2Fmeta")
