"""Which tokens stream: nostream and streamable_node_names keep a planner private."""

from __future__ import annotations

import logging

import planner_client
from conftest import expected_output


def test_private_planner_tokens_never_reach_the_stream(serve, capsys, caplog):
    server = serve("planner_app")

    with caplog.at_level(logging.ERROR, logger="langgraph_openai_serve"):
        planner_client.main(server.base_url)

    assert capsys.readouterr().out == expected_output("planner_client.out")
    assert "streamed answer text differs" in caplog.text


def test_non_streamed_answers_ignore_the_planner_either_way(serve):
    client = serve("planner_app").client()

    replies = [
        client.responses.create(model=model, input="Ok?").output_text
        for model in ("tagged", "by-node", "leaky")
    ]

    assert replies == ["Short answer: yes."] * 3
