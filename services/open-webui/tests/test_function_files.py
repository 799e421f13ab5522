"""Files through the Function: an attachment goes from Open WebUI to the
real Files API as ``input_file.file_id``; the graph's ``display_file`` call
comes back as an image in the chat message."""

from __future__ import annotations

import base64
import xml.etree.ElementTree as ET
from types import SimpleNamespace

import httpx
import pytest
from owui_support import UI_FILES_KEY, chat

pytestmark = pytest.mark.anyio

CSV = b"month,visitors,revenue\nJan,120,10.5\nFeb,340,22\nMar,95,17.25\n"
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def attachment(owui, admin_token, pipe):
    """``sales.csv`` uploaded to Open WebUI the way its message box does, and
    the chat request a pipe then sees (it carries the user's token); the
    Function reads it back from Open WebUI's configured address."""
    pipe.valves.open_webui_url = owui.url
    response = httpx.post(
        f"{owui.url}/api/v1/files/",
        params={"process": "false"},
        headers={"Authorization": f"Bearer {admin_token}"},
        files={"file": ("sales.csv", CSV, "text/csv")},
        timeout=30,
    )
    response.raise_for_status()
    uploaded = response.json()
    request = SimpleNamespace(
        base_url=f"{owui.url}/",
        headers={"authorization": f"Bearer {admin_token}"},
        cookies={},
    )
    files = [{"type": "file", "id": uploaded["id"], "name": "sales.csv"}]
    return {"__files__": files, "__request__": request}


def ask(text):
    return [{"role": "user", "content": text}]


async def test_an_attached_csv_is_charted_and_the_chart_shown_in_the_chat(
    pipe, recorder, attachment
):
    text = await chat(
        pipe, recorder, "lgos/file-display", ask("Chart the revenue"), **attachment
    )

    (shown,) = recorder.of_type("files")
    (image,) = shown["files"]
    assert image["type"] == "image"
    assert image["url"].startswith("data:image/svg+xml;base64,")
    svg = ET.fromstring(base64.b64decode(image["url"].split(",", 1)[1]))
    assert len(svg.findall(f"{SVG}rect")) == 1 + 3  # background + a bar per row
    assert "*revenue by month* (sales-chart.svg)" in text
    assert recorder.statuses()[0] == "Reading the attached file"
    assert "display_file reported" in text  # the graph answered the output


async def stored_files(files_url):
    async with httpx.AsyncClient(timeout=30) as http:
        listed = await http.get(
            f"{files_url}/files", headers={"Authorization": f"Bearer {UI_FILES_KEY}"}
        )
    return {f["id"]: f["filename"] for f in listed.json()["data"]}


async def test_the_same_attachment_is_uploaded_to_the_files_api_once(
    pipe, recorder, attachment, stack
):
    before = await stored_files(stack.files_url)
    for _ in range(2):
        await chat(
            pipe, recorder, "lgos/file-display", ask("Chart the visitors"), **attachment
        )

    after = await stored_files(stack.files_url)
    new = sorted(name for file_id, name in after.items() if file_id not in before)
    assert new == ["sales-chart.svg", "sales-chart.svg", "sales.csv"]


async def test_attachments_to_a_graph_without_file_inputs_are_not_sent(
    pipe, recorder, attachment
):
    text = await chat(pipe, recorder, "lgos/simple", ask("Hello"), **attachment)

    assert "lgos/simple does not accept files" in recorder.statuses()[0]
    assert "You said" in text
