"""The site configuration fails a build on a broken link or a missing sample."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def build(tmp_path: Path, page: str) -> subprocess.CompletedProcess[str]:
    """Build one page with the site's own configuration (inherited whole)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text(page)
    config = tmp_path / "mkdocs.yml"
    config.write_text(
        f"INHERIT: {ROOT / 'mkdocs.yml'}\n"
        f"docs_dir: {docs}\n"
        f"site_dir: {tmp_path / 'site'}\n"
        "nav: [index.md]\n"
        "plugins: [search]\n"
    )
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-f", str(config)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=60,
    )


def test_a_clean_page_builds_with_the_sample_and_no_web_fonts(tmp_path):
    result = build(tmp_path, '# Fine\n\n```python\n--8<-- "first_app.py"\n```\n')

    assert result.returncode == 0, result.stderr
    html = (tmp_path / "site" / "index.html").read_text()
    assert "bind_openai_api" in html
    assert "fonts.googleapis.com" not in html  # the site works offline


@pytest.mark.parametrize(
    ("page", "named"),
    [
        ("# Broken\n\nSee [the guide](missing.md).\n", "missing.md"),
        ("# Broken\n\n[Anchor](#nowhere)\n", "nowhere"),
        ('# Broken\n\n```python\n--8<-- "no_such_sample.py"\n```\n', "no_such_sample"),
    ],
    ids=["link", "anchor", "sample"],
)
def test_a_broken_reference_fails_the_build(tmp_path, page, named):
    result = build(tmp_path, page)

    assert result.returncode != 0
    assert named in result.stderr
