"""Files and display_file: file ids in, a client-executed display call out."""

from __future__ import annotations

import files_client
import openai
import pytest
from conftest import expected_output


def test_an_attached_file_comes_back_as_a_display_file_call(serve, capsys):
    server = serve("files_app")

    files_client.main(server.base_url)

    assert capsys.readouterr().out == expected_output("files_client.out")


def test_graphs_without_file_inputs_refuse_files(serve):
    client = serve("first_app").client()
    attached = {
        "role": "user",
        "content": [{"type": "input_file", "file_id": "file-7c1d"}],
    }

    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model="echo", input=[attached])

    assert refused.value.body["message"] == "This model does not accept file inputs."
    assert refused.value.body["param"] == "input[0].content[0]"


def test_without_display_file_offered_the_graph_only_answers(serve):
    client = serve("files_app").client()
    attached = {
        "role": "user",
        "content": [{"type": "input_file", "file_id": "file-7c1d"}],
    }

    reply = client.responses.create(model="viewer", input=[attached])

    assert reply.output_text == "Attach a file and offer display_file."
