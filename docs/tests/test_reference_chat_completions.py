"""The Chat Completions reference page: a host route composed from the
reference's builders answers the openai SDK like the mounted route."""

from __future__ import annotations

from openai import OpenAI


def test_a_host_route_composed_by_hand_answers_and_streams(serve):
    server = serve("host_chat_app")
    host = OpenAI(
        base_url=f"{server.server.url}/host/v1", api_key="unused", max_retries=0
    )
    question = [{"role": "user", "content": "Where am I?"}]

    try:
        completion = host.chat.completions.create(model="echo", messages=question)
        chunks = list(
            host.chat.completions.create(model="echo", messages=question, stream=True)
        )
    finally:
        host.close()

    assert completion.choices[0].message.content == "Host heard: Where am I?"
    assert completion.choices[0].finish_reason == "stop"
    streamed = "".join(
        chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices
    )
    assert streamed == "Host heard: Where am I?"
    assert chunks[-1].choices[0].finish_reason == "stop"
