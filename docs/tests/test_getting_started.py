"""The getting-started page: the ten-line app, listed, answered and streamed."""

from __future__ import annotations

import first_client
from conftest import expected_output


def test_first_app_answers_the_openai_sdk_as_the_page_shows(serve, capsys):
    server = serve("first_app")

    first_client.main(server.base_url)

    assert capsys.readouterr().out == expected_output("first_client.out")


def test_first_app_is_healthy_and_advertises_its_description(serve):
    server = serve("first_app")

    assert server.get("/health").status_code == 200
    model = server.get("/models/echo").json()
    assert model["lgos"]["description"] == "Repeats you."
