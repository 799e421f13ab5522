"""Listing: order, cursors, limits and purpose filters, as OpenAI pages them."""

from __future__ import annotations

import httpx
import pytest
from openai import OpenAI


@pytest.fixture
def five_files(client: OpenAI) -> list[str]:
    """Five files, oldest first; purposes alternate user_data / assistants."""
    ids = []
    for number in range(5):
        purpose = "user_data" if number % 2 == 0 else "assistants"
        created = client.files.create(
            file=(f"f{number}.txt", str(number).encode()), purpose=purpose
        )
        ids.append(created.id)
    return ids


def test_list_defaults_to_newest_first(client: OpenAI, five_files: list[str]) -> None:
    page = client.files.list()

    assert [f.id for f in page.data] == five_files[::-1]
    assert page.has_more is False


def test_order_asc_lists_oldest_first(client: OpenAI, five_files: list[str]) -> None:
    page = client.files.list(order="asc")

    assert [f.id for f in page.data] == five_files


def test_limit_and_after_walk_pages_in_both_orders(
    client: OpenAI, five_files: list[str]
) -> None:
    for order, expected in (("asc", five_files), ("desc", five_files[::-1])):
        seen: list[str] = []
        after: str | None = None
        pages = 0
        while True:
            if after is None:
                page = client.files.list(order=order, limit=2)
            else:
                page = client.files.list(order=order, limit=2, after=after)
            pages += 1
            seen.extend(f.id for f in page.data)
            if not page.has_more:
                break
            after = page.data[-1].id
        assert seen == expected, order
        assert pages == 3, order


def test_list_object_carries_first_last_and_has_more(
    http: httpx.Client, tenant, five_files: list[str]
) -> None:
    response = http.get(
        "/v1/files", params={"order": "asc", "limit": 2}, headers=tenant.headers
    )

    body = response.json()
    assert response.status_code == 200
    assert body["object"] == "list"
    assert body["first_id"] == five_files[0]
    assert body["last_id"] == five_files[1]
    assert body["has_more"] is True
    assert [f["id"] for f in body["data"]] == five_files[:2]


def test_last_page_has_no_more(
    http: httpx.Client, tenant, five_files: list[str]
) -> None:
    response = http.get(
        "/v1/files",
        params={"order": "asc", "limit": 2, "after": five_files[2]},
        headers=tenant.headers,
    )

    body = response.json()
    assert [f["id"] for f in body["data"]] == five_files[3:]
    assert body["has_more"] is False


def test_empty_list_has_null_ids(http: httpx.Client, tenant) -> None:
    body = http.get("/v1/files", headers=tenant.headers).json()

    assert body == {
        "object": "list",
        "data": [],
        "first_id": None,
        "last_id": None,
        "has_more": False,
    }


def test_purpose_filter_keeps_order_and_pages(
    client: OpenAI, five_files: list[str]
) -> None:
    first = client.files.list(purpose="user_data", order="asc", limit=2)
    rest = client.files.list(
        purpose="user_data", order="asc", limit=2, after=first.data[-1].id
    )

    assert [f.id for f in first.data] == [five_files[0], five_files[2]]
    assert first.has_more is True
    assert [f.id for f in rest.data] == [five_files[4]]
    assert rest.has_more is False


def test_sdk_auto_pagination_visits_every_file(
    client: OpenAI, five_files: list[str]
) -> None:
    ids = [f.id for f in client.files.list(limit=2, order="asc")]

    assert ids == five_files


@pytest.mark.parametrize(
    ("params", "param"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": 10_001}, "limit"),
        ({"limit": "many"}, "limit"),
        ({"order": "sideways"}, "order"),
        ({"after": "not-a-file-id"}, "after"),
        ({"purpose": "nonsense"}, "purpose"),
    ],
)
def test_bad_list_parameters_answer_400_naming_the_param(
    http: httpx.Client, tenant, params: dict[str, object], param: str
) -> None:
    response = http.get("/v1/files", params=params, headers=tenant.headers)

    assert response.status_code == 400
    assert response.json()["error"]["param"] == param
    assert response.json()["error"]["type"] == "invalid_request_error"
