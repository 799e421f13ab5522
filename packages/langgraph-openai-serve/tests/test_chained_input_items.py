"""``GET /responses/{id}/input_items`` of a Response that continues others:
the items it was generated from, each earlier turn's input and output (with
the ids they had there) then its own input, paged across the whole list.
One suite, run on the memory and the PostgreSQL response store."""

from __future__ import annotations

import pytest
from langgraph_openai_serve.testing import ScriptedChatModel
from stored_app import transcript
from support import config, error_body, single_model_graph

pytestmark = pytest.mark.anyio


@pytest.fixture
def client(make_client, kept_backend):
    graphs = {
        "history": config(single_model_graph(ScriptedChatModel(responder=transcript)))
    }
    return make_client(graphs, backend=kept_backend)


async def _ids(client, response_id, **query):
    page = await client.responses.input_items.list(response_id, **query)
    return [item.id for item in page.data], page.has_more


async def _three_turns(client):
    first = await client.responses.create(
        model="history",
        input=[
            {"role": "user", "content": "My name is Ada."},
            {"role": "user", "content": "I like tea."},
        ],
    )
    second = await client.responses.create(
        model="history", input="And coffee.", previous_response_id=first.id
    )
    third = await client.responses.create(
        model="history", input="What do you know?", previous_response_id=second.id
    )
    return first, second, third


async def _own(client, response):
    return [item.id async for item in client.responses.input_items.list(response.id)]


async def test_a_chained_response_lists_the_earlier_turns_then_its_own_input(client):
    first, second, third = await _three_turns(client)
    # The first turn lists what its request carried: nothing earlier.
    first_input = (await _ids(client, first.id, order="asc"))[0]

    listed = [
        item async for item in client.responses.input_items.list(third.id, order="asc")
    ]
    second_listed = (await _ids(client, second.id, order="asc"))[0]

    expected = [
        *first_input,
        *(item.id for item in first.output),
        second_listed[-1],
        *(item.id for item in second.output),
    ]
    assert [item.id for item in listed[:-1]] == expected
    assert second_listed == expected[: len(first_input) + len(first.output) + 1]
    assert [item.content[0].text for item in listed] == [
        "My name is Ada.",
        "I like tea.",
        first.output_text,
        "And coffee.",
        second.output_text,
        "What do you know?",
    ]
    assert [item.role for item in listed] == [
        "user",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]


async def test_pages_walk_the_whole_chained_list_both_ways(client):
    _, _, third = await _three_turns(client)
    everything = [
        item.id
        async for item in client.responses.input_items.list(third.id, order="asc")
    ]
    assert len(everything) == 6

    # asc, two at a time, with after
    walked, after, more = [], None, True
    while more:
        page, more = await _ids(
            client,
            third.id,
            order="asc",
            limit=2,
            **({"after": after} if after else {}),
        )
        walked += page
        after = page[-1]
    # desc is the same list newest first (the default order)
    newest, more_desc = await _ids(client, third.id, limit=4)
    # before: the page just before an item, in the list's order
    before_last, more_before = await _ids(
        client, third.id, order="asc", limit=2, extra_query={"before": everything[5]}
    )
    before_third, none_before = await _ids(
        client, third.id, order="asc", limit=2, extra_query={"before": everything[2]}
    )
    between, more_between = await _ids(
        client,
        third.id,
        order="desc",
        after=everything[5],
        extra_query={"before": everything[1]},
    )

    assert walked == everything
    assert newest == everything[::-1][:4]
    assert more_desc is True
    assert before_last == everything[3:5]
    assert more_before is True
    assert before_third == everything[:2]
    assert none_before is False
    assert between == everything[4:1:-1]
    assert more_between is False


async def test_unknown_cursors_name_their_param(client):
    _, _, third = await _three_turns(client)

    for param in ("after", "before"):
        body = await error_body(
            client.responses.input_items.list(
                third.id, extra_query={param: "msg_unknown"}
            ),
            400,
        )
        assert body["param"] == param


async def test_a_deleted_ancestor_leaves_the_turns_after_it(client):
    first, second, third = await _three_turns(client)

    await client.responses.delete(first.id)
    listed = [
        item.content[0].text
        async for item in client.responses.input_items.list(third.id, order="asc")
    ]

    assert listed == ["And coffee.", second.output_text, "What do you know?"]
