"""Authentication and request errors, always in the OpenAI envelope."""

from __future__ import annotations

import httpx
import openai
import pytest
from openai import OpenAI


def _error(response: httpx.Response) -> dict[str, object]:
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"message", "type", "param", "code"}
    error: dict[str, object] = body["error"]
    return error


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/files"),
        ("POST", "/v1/files"),
        ("GET", "/v1/files/file-0123456789abcdef01234567"),
        ("GET", "/v1/files/file-0123456789abcdef01234567/content"),
        ("DELETE", "/v1/files/file-0123456789abcdef01234567"),
    ],
)
def test_every_files_route_answers_401_without_a_key(
    http: httpx.Client, method: str, path: str
) -> None:
    response = http.request(method, path)

    assert response.status_code == 401
    assert _error(response)["type"] == "invalid_request_error"
    assert "API key" in str(_error(response)["message"])


def test_unknown_key_answers_401_invalid_api_key(http: httpx.Client) -> None:
    response = http.get("/v1/files", headers={"Authorization": "Bearer sk-nobody"})

    assert response.status_code == 401
    assert _error(response)["code"] == "invalid_api_key"


def test_sdk_with_a_wrong_key_raises_authentication_error(server) -> None:
    bad = OpenAI(api_key="sk-wrong", base_url=f"{server.url}/v1", max_retries=0)
    with bad, pytest.raises(openai.AuthenticationError):
        bad.files.list()


def test_bad_purpose_answers_400_with_param(client: OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        client.files.create(file=("a.txt", b"a"), purpose="nonsense")

    assert raised.value.status_code == 400
    assert raised.value.param == "purpose"
    assert raised.value.type == "invalid_request_error"
    assert "user_data" in raised.value.message


@pytest.mark.parametrize(
    ("data", "param"),
    [
        ({}, "purpose"),
        (
            {
                "purpose": "user_data",
                "expires_after[anchor]": "now",
                "expires_after[seconds]": "60",
            },
            "expires_after.anchor",
        ),
        (
            {"purpose": "user_data", "expires_after[anchor]": "created_at"},
            "expires_after.seconds",
        ),
        (
            {
                "purpose": "user_data",
                "expires_after[anchor]": "created_at",
                "expires_after[seconds]": "soon",
            },
            "expires_after.seconds",
        ),
        (
            {
                "purpose": "user_data",
                "expires_after[anchor]": "created_at",
                "expires_after[seconds]": "0",
            },
            "expires_after.seconds",
        ),
        (
            {
                "purpose": "user_data",
                "expires_after[anchor]": "created_at",
                "expires_after[seconds]": "2592001",
            },
            "expires_after.seconds",
        ),
        ({"purpose": "user_data", "colour": "blue"}, "colour"),
    ],
)
def test_bad_form_fields_answer_400_naming_the_param(
    http: httpx.Client, tenant, bucket, data: dict[str, str], param: str
) -> None:
    response = http.post(
        "/v1/files",
        headers=tenant.headers,
        files={"file": ("a.txt", b"abc")},
        data=data,
    )

    assert response.status_code == 400
    assert _error(response)["param"] == param
    # A refused upload leaves nothing behind.
    assert bucket.owner_keys(tenant.owner) == []


def test_missing_file_answers_400_with_param_file(http: httpx.Client, tenant) -> None:
    response = http.post(
        "/v1/files",
        headers=tenant.headers,
        files={"purpose": (None, "user_data")},
    )

    assert response.status_code == 400
    assert _error(response)["param"] == "file"


def test_two_files_in_one_request_answer_400(http: httpx.Client, tenant) -> None:
    response = http.post(
        "/v1/files",
        headers=tenant.headers,
        files=[("file", ("a.txt", b"a")), ("file", ("b.txt", b"b"))],
        data={"purpose": "user_data"},
    )

    assert response.status_code == 400
    assert _error(response)["param"] == "file"


def test_non_multipart_upload_answers_400(http: httpx.Client, tenant) -> None:
    response = http.post(
        "/v1/files", headers=tenant.headers, json={"purpose": "user_data"}
    )

    assert response.status_code == 400
    assert "multipart/form-data" in str(_error(response)["message"])


def test_garbled_multipart_answers_400(http: httpx.Client, tenant) -> None:
    response = http.post(
        "/v1/files",
        headers=tenant.headers | {"Content-Type": "multipart/form-data; boundary=xyz"},
        content=b"--xyz\r\nContent-Disposition: form-data\r\n\r\nx\r\n--xyz--\r\n",
    )

    assert response.status_code == 400
    assert _error(response)["type"] == "invalid_request_error"


def test_unknown_route_answers_404_in_the_envelope(http: httpx.Client) -> None:
    response = http.get("/v1/nothing-here")

    assert response.status_code == 404
    assert _error(response)["type"] == "invalid_request_error"


def test_wrong_method_answers_405_in_the_envelope(http: httpx.Client) -> None:
    response = http.put("/v1/files")

    assert response.status_code == 405
    assert _error(response)["message"] == "Method not allowed."
