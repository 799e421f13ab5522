"""Through a real LiteLLM proxy in front of a real LGOS server.

The proxy runs on a config the sync wrote (see ``conftest.litellm``).
Responses through LiteLLM (``/v1/responses``, streamed and not) will be
tested here once LGOS serves ``/v1/responses``; the entries already route
with the ``openai/`` provider, which forwards that route natively.
"""

from __future__ import annotations

import pytest
from model_sync_support import (
    PREFIX,
    LgosServer,
    LiteLLMProxy,
    deployment_spec,
    run_cli,
    unowned_entry,
)

pytestmark = pytest.mark.timeout(180)


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


def test_chat_completion_reaches_the_graph_through_litellm(
    litellm: LiteLLMProxy,
) -> None:
    completion = litellm.openai().chat.completions.create(
        model=f"{PREFIX}/echo",
        messages=[{"role": "user", "content": "hello through the proxy"}],
    )

    assert (
        completion.choices[0].message.content == "echo heard: hello through the proxy"
    )


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
