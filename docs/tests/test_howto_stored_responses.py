"""Keep Responses: chain with previous_response_id, retrieve, list, delete."""

from __future__ import annotations

import conversation_client
import memory_client
import openai
import pytest
from conftest import expected_output


def test_a_conversation_is_continued_retrieved_listed_and_deleted(serve, capsys):
    server = serve("memory_app")

    memory_client.main(server.base_url)

    assert capsys.readouterr().out == expected_output("memory_client.out")


def test_deleting_the_first_turn_cuts_the_conversation_there(serve):
    client = serve("memory_app").client()
    first = client.responses.create(model="recall", input="One.")
    second = client.responses.create(
        model="recall", input="Two.", previous_response_id=first.id
    )
    client.responses.delete(first.id)

    third = client.responses.create(
        model="recall", input="Three.", previous_response_id=second.id
    )

    assert third.output_text == "You told me 2 things: Two.; Three."
    with pytest.raises(openai.NotFoundError) as gone:
        client.responses.create(
            model="recall", input="Again.", previous_response_id=first.id
        )
    assert gone.value.body["param"] == "previous_response_id"


def test_a_conversation_collects_every_turn_until_deleted(serve, capsys):
    server = serve("memory_app")

    conversation_client.main(server.base_url)

    assert capsys.readouterr().out == expected_output("conversation_client.out")


def test_conversation_and_previous_response_id_together_are_refused(serve):
    client = serve("memory_app").client()
    conversation = client.conversations.create()
    first = client.responses.create(model="recall", input="One.")

    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(
            model="recall",
            input="Two.",
            conversation=conversation.id,
            previous_response_id=first.id,
        )
    assert refused.value.body["param"] == "conversation"
