"""The graph adapters tutorial: a graph whose state has no messages."""

from __future__ import annotations

import adapters_client
from conftest import expected_output


def test_adapters_feed_question_user_and_locale_and_render_the_answer(serve, capsys):
    server = serve("adapters_app")

    adapters_client.main(server.base_url)

    assert capsys.readouterr().out == expected_output("adapters_client.out")


def test_earlier_turns_reach_the_graph_as_history(serve):
    server = serve("adapters_app")
    client = server.client()

    reply = client.responses.create(
        model="qa",
        input=[
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello"},
            {"role": "user", "content": "What is a node?"},
        ],
    )

    assert reply.output_text == "[for anonymous, locale en] Q: What is a node?"
