"""The offline search: SearXNG's JSON API over the bundled docs."""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile
from importlib import resources
from pathlib import Path

from lgos_demos.search.corpus import Corpus, anchor
from lgos_demos.search_client import search_query

CORPUS = ["demos.md", "files-api.md", "lgos.md", "model-sync.md"]


def test_the_corpus_ships_as_package_data():
    folder = resources.files("lgos_demos.search").joinpath("corpus")
    names = sorted(
        entry.name for entry in folder.iterdir() if entry.name.endswith(".md")
    )

    assert names == CORPUS
    assert len(Corpus.bundled().sections) > 20


def test_ranking_prefers_the_section_about_the_query():
    guide = (
        "# Guide\n\nIntro text.\n\n## Uploads\n\nUpload files with POST.\n\n"
        "## Search\n\nSearch the `docs` for [answers](http://x).\n\n"
        "```\n# not a heading\n```\n"
    )
    corpus = Corpus({"guide": guide})

    hits = corpus.search("how do I search the docs")

    assert [h.section.path() for h in hits] == ["/docs/guide#search"]
    assert hits[0].snippet == "Search the docs for answers."
    assert [s.heading for s in corpus.sections] == ["Guide", "Uploads", "Search"]


def test_a_table_is_indexed_by_its_rows_without_its_header():
    guide = (
        "# Settings\n\n| variable | default | meaning |\n|---|---|---|\n"
        "| `PORT` | 8000 | where it listens |\n"
    )

    section = Corpus({"guide": guide}).sections[0]

    assert section.plain == "PORT — 8000 — where it listens."


def test_a_long_question_becomes_a_bounded_query_cut_at_a_word():
    long = "upload   files\nto the Files API " * 40

    query = search_query(long, limit=50)

    assert query == "upload files to the Files API upload files to the…"
    assert len(query) <= 50
    assert search_query("  what is\tLGOS? ") == "what is LGOS?"
    assert search_query("x" * 80, limit=50) == "x" * 49 + "…"


def test_anchors_follow_github():
    assert anchor("Settings (`LGOS_FILES_*`)") == "settings-lgos_files_"
    assert anchor("Files And display_file") == "files-and-display_file"


def test_search_answers_like_searxng(http, stack):
    found = http.get(
        f"{stack.search_url}/search", params={"q": "upload files", "format": "json"}
    )

    body = found.json()
    assert body["query"] == "upload files"
    assert body["number_of_results"] == len(body["results"]) > 0
    for key in (
        "answers",
        "corrections",
        "infoboxes",
        "suggestions",
        "unresponsive_engines",
    ):
        assert body[key] == []
    first = body["results"][0]
    assert set(first) >= {"url", "title", "content", "engine", "score"}
    assert first["url"].startswith(f"{stack.search_url}/docs/")
    page = http.get(first["url"])
    assert page.headers["content-type"].startswith("text/markdown")
    assert page.text.startswith("# ")


def test_search_refuses_formats_it_does_not_serve(http, stack):
    html = http.get(f"{stack.search_url}/search", params={"q": "files"})
    empty = http.get(f"{stack.search_url}/search", params={"q": " ", "format": "json"})

    assert html.status_code == 403
    assert empty.status_code == 400


def test_the_wheel_ships_the_corpus(tmp_path):
    uv = os.environ.get("UV") or shutil.which("uv")
    assert uv, "the tests run under uv"
    root = Path(__file__).resolve().parents[2]

    subprocess.run(
        [uv, "build", "--package", "lgos-demos", "--wheel", "--out-dir", str(tmp_path)],
        cwd=root,
        check=True,
        capture_output=True,
        timeout=120,
    )

    (wheel,) = tmp_path.glob("lgos_demos-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    shipped = {n for n in names if n.startswith("lgos_demos/search/corpus/")}
    assert {f"lgos_demos/search/corpus/{name}" for name in CORPUS} == shipped
