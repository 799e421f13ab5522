"""A service key (LGOS's Batch API) acts for the owner it names: it reads the
owner's files and writes ``batch_output`` files the owner then owns; owners'
keys can do neither."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import openai
import pytest
from conftest import SERVICE_KEY, Tenant
from lgos_files_api.auth import KeyRing
from lgos_files_api.errors import AuthenticationError, InvalidRequestError
from openai import OpenAI


def _service(owner: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {SERVICE_KEY}", "X-Lgos-Owner": owner}


def test_a_service_writes_batch_output_that_only_its_owner_sees(
    http: httpx.Client, make_client: Callable[[Tenant], OpenAI], new_tenant
) -> None:
    owner, other = new_tenant(), new_tenant()
    written = http.post(
        "/v1/files",
        headers=_service(owner.owner),
        files={"file": ("batch_output.jsonl", b'{"custom_id": "a"}\n')},
        data={"purpose": "batch_output"},
    )
    assert written.status_code == 200, written.text
    file_id = written.json()["id"]

    mine = make_client(owner)
    assert [f.id for f in mine.files.list(purpose="batch_output")] == [file_id]
    assert mine.files.retrieve(file_id).purpose == "batch_output"
    assert mine.files.content(file_id).read() == b'{"custom_id": "a"}\n'
    with pytest.raises(openai.NotFoundError):
        make_client(other).files.content(file_id)


def test_a_service_reads_the_input_its_owner_uploaded(
    http: httpx.Client, make_client: Callable[[Tenant], OpenAI], new_tenant
) -> None:
    owner, other = new_tenant(), new_tenant()
    uploaded = make_client(owner).files.create(
        file=("in.jsonl", b"line\n"), purpose="batch"
    )

    read = http.get(f"/v1/files/{uploaded.id}/content", headers=_service(owner.owner))
    assert read.status_code == 200
    assert read.content == b"line\n"
    elsewhere = http.get(
        f"/v1/files/{uploaded.id}/content", headers=_service(other.owner)
    )
    assert elsewhere.status_code == 404


def test_an_owner_cannot_upload_batch_output(client: OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        client.files.create(file=("x.jsonl", b"{}\n"), purpose="batch_output")  # type: ignore[arg-type]

    assert raised.value.body["param"] == "purpose"  # type: ignore[index]


def test_an_owner_key_cannot_act_for_another_owner(
    http: httpx.Client, new_tenant
) -> None:
    owner, victim = new_tenant(), new_tenant()
    answer = http.get(
        "/v1/files", headers={**owner.headers, "X-Lgos-Owner": victim.owner}
    )

    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "invalid_api_key"


@pytest.mark.parametrize("acting_for", [None, "", "../alice", "a" * 65])
def test_a_service_key_must_name_a_valid_owner(acting_for: str | None) -> None:
    ring = KeyRing({"sk-alice": "alice"}, [SERVICE_KEY])

    with pytest.raises(InvalidRequestError) as raised:
        ring.caller(f"Bearer {SERVICE_KEY}", acting_for)

    assert raised.value.param == "X-Lgos-Owner"


def test_a_service_key_is_no_owner_key() -> None:
    ring = KeyRing({"sk-alice": "alice"}, [SERVICE_KEY])

    assert ring.caller(f"Bearer {SERVICE_KEY}", "alice").service
    assert not ring.caller("Bearer sk-alice", None).service
    with pytest.raises(AuthenticationError):
        ring.caller("Bearer sk-alice", "bob")
