"""Files: attachments go up to the Files API as input_file; display_file
downloads, shows and answers with the matching function_call_output."""

from __future__ import annotations

import json

import pytest
from lgos_chainlit.conversation import Attachment
from lgos_chainlit.events import AnswerDelta, FileShown, Notice, TurnFinished
from lgos_chainlit.files import DISPLAY_FILE_TOOL, FilesClient, display_file
from lgos_chainlit.request_parts import request_tools
from openai import AsyncOpenAI
from ui_lgos_app import SVG
from ui_support import UI_FILES_KEY, collect

pytestmark = pytest.mark.anyio


def _answer(events) -> str:
    return "".join(e.text for e in events if isinstance(e, AnswerDelta))


@pytest.fixture
def csv(tmp_path):
    path = tmp_path / "upload-1234.csv"
    path.write_text("month,sales\njan,3\nfeb,5\n")
    return Attachment(path=path, name="sales.csv", mime="text/csv")


async def test_an_image_is_uploaded_charted_shown_and_answered(
    make_conversation, recorder, csv, files_server
):
    chat = await make_conversation("chart")

    events = await collect(chat.send("chart this", [csv]))

    first, follow_up = recorder.bodies[-2:]
    assert DISPLAY_FILE_TOOL in first["tools"]
    (message,) = first["input"]
    text, attached = message["content"]
    assert text == {"type": "input_text", "text": "chart this"}
    assert attached["type"] == "input_file"
    assert attached["file_id"].startswith("file-")
    (shown,) = [e.file for e in events if isinstance(e, FileShown)]
    assert (shown.filename, shown.mime, shown.content) == (
        "chart.svg",
        "image/svg+xml",
        SVG,
    )
    assert shown.is_image
    assert shown.title == "24 bytes charted"
    call, output = follow_up["input"][-2:]
    assert (call["type"], call["name"]) == ("function_call", "display_file")
    assert output["type"] == "function_call_output"
    assert output["call_id"] == call["call_id"]
    assert json.loads(output["output"]) == {
        "displayed": True,
        "file_id": shown.file_id,
        "filename": "chart.svg",
        "as": "inline image",
    }
    assert _answer(events).startswith("Shown: {")
    assert [e.status for e in events if isinstance(e, TurnFinished)] == [
        "completed",
        "completed",
    ]
    async with AsyncOpenAI(
        base_url=files_server.openai_url, api_key=UI_FILES_KEY
    ) as sdk:
        uploaded = await sdk.files.retrieve(attached["file_id"])
    assert (uploaded.filename, uploaded.purpose) == ("sales.csv", "user_data")


async def test_other_files_are_offered_as_downloads(make_conversation, recorder, csv):
    chat = await make_conversation("chart")

    events = await collect(chat.send("as text please", [csv]))

    (shown,) = [e.file for e in events if isinstance(e, FileShown)]
    assert (shown.filename, shown.mime, shown.content) == (
        "report.txt",
        "text/plain",
        b"rows: 3",
    )
    assert not shown.is_image
    output = json.loads(recorder.bodies[-1]["input"][-1]["output"])
    assert output["as"] == "download"


async def test_a_file_that_cannot_be_fetched_is_still_answered(
    make_conversation, recorder, csv
):
    chat = await make_conversation("chart")

    events = await collect(chat.send("chart the missing one", [csv]))

    assert not [e for e in events if isinstance(e, FileShown)]
    (notice,) = [e for e in events if isinstance(e, Notice)]
    assert notice.level == "warning"
    assert "file-missing" in notice.text
    output = json.loads(recorder.bodies[-1]["input"][-1]["output"])
    assert output["displayed"] is False
    assert "file-missing" in output["error"]
    assert _answer(events).startswith("Shown: ")
    assert chat.ledger.unanswered_calls() == []


async def test_graphs_without_file_inputs_get_no_attachments(
    make_conversation, recorder, csv
):
    chat = await make_conversation("plain")

    events = await collect(chat.send("here is a file", [csv]))

    notice = events[0]
    assert isinstance(notice, Notice)
    assert "plain does not accept files" in notice.text
    assert recorder.bodies[-1]["input"][-1]["content"] == [
        {"type": "input_text", "text": "here is a file"}
    ]
    assert "tools" not in recorder.bodies[-1]
    assert _answer(events) == "Plain answer."


async def test_display_file_is_offered_only_with_a_files_api(make_conversation):
    chat = await make_conversation("chart")
    offered = request_tools(chat.graph, chat.state, chat.files)
    chat.files = None

    assert offered == [DISPLAY_FILE_TOOL]
    assert request_tools(chat.graph, chat.state, chat.files) == []


async def test_downloads_larger_than_the_limit_are_refused(files_server):
    async with AsyncOpenAI(
        base_url=files_server.openai_url, api_key=UI_FILES_KEY
    ) as sdk:
        created = await sdk.files.create(
            file=("big.bin", b"x" * 2048, "application/octet-stream"),
            purpose="user_data",
        )
        small = FilesClient(sdk, max_download_bytes=1024)
        call = {
            "call_id": "c1",
            "arguments": json.dumps(
                {"file_id": created.id, "filename": "b", "title": ""}
            ),
        }

        shown, output = await display_file(call, small)

    assert shown is None
    assert output["call_id"] == "c1"
    assert "the limit is 1024" in json.loads(output["output"])["error"]


async def test_calls_without_a_file_id_or_files_api_are_answered_with_the_reason():
    no_id, output = await display_file({"call_id": "c", "arguments": "{}"}, None)
    assert no_id is None
    assert json.loads(output["output"]) == {
        "displayed": False,
        "error": "no file_id given",
    }

    call = {"call_id": "c", "arguments": json.dumps({"file_id": "file-1"})}
    _, output = await display_file(call, None)
    assert "no Files API" in json.loads(output["output"])["error"]
