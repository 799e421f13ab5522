"""Through a real LiteLLM proxy in front of a real LGOS server.

The proxy runs on a config the sync wrote (see ``conftest.litellm``).

Responses (streamed and not) pass through natively: the ``openai/`` provider
sends LiteLLM's ``/v1/responses`` to LGOS's ``/v1/responses`` with the
client's body unchanged except ``model`` (the prefix and provider dropped),
never as Chat Completions. The LGOS test app records every exchange, so the
tests check that route and body on LGOS's side, and that what the client
reads is what LGOS answered: the output items (ids and ``phase`` included)
unchanged, and the stream event for event. LiteLLM does replace the
response ``id`` with an opaque ``resp_…`` id of its own (LGOS's ``resp_<hex>``
never reaches the client), so the ids of the output items, not the response
id, are what ties the client's answer to LGOS's.
"""

from __future__ import annotations

from model_sync_support import (
    PREFIX,
    Exchange,
    LgosServer,
    LiteLLMProxy,
    deployment_spec,
    run_cli,
    unowned_entry,
)
from openai.types.responses import (
    ResponseCompletedEvent,
    ResponseCreatedEvent,
    ResponseInProgressEvent,
)


def test_model_info_carries_lgos_exactly_as_lgos_serves_it(
    litellm: LiteLLMProxy, lgos_server: LgosServer
) -> None:
    info = litellm.model_info()

    for model_id in lgos_server.model_ids():
        served = lgos_server.get(f"/models/{model_id}")["lgos"]
        assert info[f"{PREFIX}/{model_id}"]["lgos"] == served
    assert info[f"{PREFIX}/tuned"]["lgos"]["client_settings"]["defaults"] == {
        "audience": "general",
        "use_history": False,
    }


def only_exchange(lgos_server: LgosServer, mark: int, path: str) -> Exchange:
    """The one exchange LGOS served since ``mark``: a successful POST to ``path``."""
    exchanges = lgos_server.exchanges_since(mark)
    assert [(e.method, e.path, e.status) for e in exchanges] == [("POST", path, 200)]
    return exchanges[0]


def test_chat_completion_reaches_the_graph_through_litellm(
    litellm: LiteLLMProxy, lgos_server: LgosServer
) -> None:
    mark = len(lgos_server.exchanges)

    completion = litellm.openai().chat.completions.create(
        model=f"{PREFIX}/echo",
        messages=[{"role": "user", "content": "hello through the proxy"}],
    )

    assert (
        completion.choices[0].message.content == "echo heard: hello through the proxy"
    )
    only_exchange(lgos_server, mark, "/v1/chat/completions")


def test_streamed_chat_completion_reaches_the_graph_through_litellm(
    litellm: LiteLLMProxy,
) -> None:
    stream = litellm.openai().chat.completions.create(
        model=f"{PREFIX}/tuned",
        messages=[{"role": "user", "content": "stream it"}],
        stream=True,
    )

    deltas = [
        chunk.choices[0].delta.content
        for chunk in stream
        if chunk.choices and chunk.choices[0].delta.content
    ]
    assert len(deltas) > 1
    assert "".join(deltas) == "tuned heard: stream it"


def test_response_reaches_the_graph_through_litellm_natively(
    litellm: LiteLLMProxy, lgos_server: LgosServer
) -> None:
    mark = len(lgos_server.exchanges)

    response = litellm.openai().responses.create(
        model=f"{PREFIX}/echo", input="hello through responses"
    )

    assert response.output_text == "echo heard: hello through responses"
    assert response.status == "completed"
    assert response.model == f"{PREFIX}/echo"
    assert response.id.startswith("resp_")
    [message] = response.output
    assert message.type == "message"
    assert message.role == "assistant"
    assert message.phase == "final_answer"
    # LGOS's /v1/responses got the client's body, only the model renamed...
    exchange = only_exchange(lgos_server, mark, "/v1/responses")
    assert exchange.content_type == "application/json"
    assert exchange.request_json() == {
        "model": "echo",
        "input": "hello through responses",
    }
    # ...and its output items reached the client unchanged.
    served = exchange.response_json()
    assert served["id"].startswith("resp_")
    assert response.id != served["id"]  # LiteLLM's own id replaces LGOS's
    assert [item.model_dump(mode="json") for item in response.output] == (
        served["output"]
    )
    assert message.id == served["output"][0]["id"]


def test_streamed_response_reaches_the_graph_through_litellm_natively(
    litellm: LiteLLMProxy, lgos_server: LgosServer
) -> None:
    mark = len(lgos_server.exchanges)

    stream = litellm.openai().responses.create(
        model=f"{PREFIX}/tuned", input="stream a response", stream=True
    )
    events = list(stream)

    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert len(deltas) > 1
    assert "".join(deltas) == "tuned heard: stream a response"
    assert events[0].type == "response.created"
    assert events[-1].type == "response.completed"
    completed = events[-1].response
    assert completed.status == "completed"
    assert completed.output_text == "tuned heard: stream a response"
    [message] = completed.output
    assert message.type == "message"
    assert message.phase == "final_answer"
    lifecycle = (ResponseCreatedEvent, ResponseInProgressEvent, ResponseCompletedEvent)
    ids = {e.response.id for e in events if isinstance(e, lifecycle)}
    assert sum(isinstance(e, lifecycle) for e in events) == 3
    assert len(ids) == 1
    assert ids.pop().startswith("resp_")
    # LGOS streamed from /v1/responses, and the client read that stream event
    # for event: same types, order, sequence numbers, deltas and item ids.
    exchange = only_exchange(lgos_server, mark, "/v1/responses")
    assert exchange.content_type.startswith("text/event-stream")
    assert exchange.request_json() == {
        "model": "tuned",
        "input": "stream a response",
        "stream": True,
    }
    served = exchange.sse_data()
    assert [(e.type, e.sequence_number) for e in events] == [
        (s["type"], s["sequence_number"]) for s in served
    ]
    assert deltas == [
        s["delta"] for s in served if s["type"] == "response.output_text.delta"
    ]
    assert message.id == served[-1]["response"]["output"][0]["id"]


def test_an_unowned_model_is_served_and_its_lines_kept(
    litellm: LiteLLMProxy, lgos_server: LgosServer
) -> None:
    info = litellm.model_info()

    assert info["handwritten/echo"]["note"] == "written by a person"
    assert "lgos_sync" not in info["handwritten/echo"]
    assert unowned_entry(lgos_server.base_url) in litellm.config.read_text()


def test_a_graph_removed_from_lgos_disappears_after_resync_and_restart(
    litellm: LiteLLMProxy, lgos_server: LgosServer
) -> None:
    assert f"{PREFIX}/retiring" in litellm.model_info()
    lgos_server.remove("retiring")

    synced = run_cli(
        "--config",
        str(litellm.config),
        "--deployment",
        deployment_spec(lgos_server.base_url),
    )
    assert synced.code == 0, synced.err
    litellm.restart()

    info = litellm.model_info()
    assert f"{PREFIX}/retiring" not in info
    assert {f"{PREFIX}/echo", f"{PREFIX}/tuned", "handwritten/echo"} <= set(info)
    assert unowned_entry(lgos_server.base_url) in litellm.config.read_text()
