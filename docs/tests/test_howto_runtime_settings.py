"""Runtime settings: discovered, changed per request, validated."""

from __future__ import annotations

import json

import openai
import pytest
import settings_client
from conftest import expected_output


def test_settings_are_discovered_applied_and_validated(serve, capsys):
    server = serve("settings_app")

    settings_client.main(server.base_url)

    assert capsys.readouterr().out == expected_output("settings_client.out")


def test_the_model_list_leaves_settings_to_the_detail_route(serve):
    server = serve("settings_app")

    (listed,) = server.get("/models").json()["data"]

    assert "client_settings" not in listed["lgos"]


def test_unknown_settings_are_refused(serve):
    client = serve("settings_app").client()

    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(
            model="tutor",
            input="Hi",
            metadata={"lgos_settings": json.dumps({"tone": "pirate"})},
        )

    assert refused.value.body["param"] == "metadata.lgos_settings"


def test_chat_completions_take_the_same_metadata(serve):
    client = serve("settings_app").client()

    reply = client.chat.completions.create(
        model="tutor",
        messages=[{"role": "user", "content": "Hi"}],
        metadata={"lgos_settings": json.dumps({"audience": "expert"})},
    )

    assert reply.choices[0].message.content == (
        "Explain for a expert audience in at most 3 sentences."
    )
