"""The Chainlit app as it runs: ``lgos-chainlit`` (``chainlit run --headless``)
as a subprocess on a free loopback port, against the real LGOS server."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from lgos_chainlit.cli import APP, chainlit_command, main, prepare_home
from ui_support import start_ui


def test_the_ui_serves_its_page_and_one_profile_per_graph(ui):
    url, home, cwd = ui

    page = httpx.get(url, timeout=10)
    with httpx.Client(base_url=url, timeout=10) as browser:
        browser.post("/auth/header").raise_for_status()  # a guest
        settings = browser.get("/project/settings").json()

    assert page.status_code == 200
    assert "<html" in page.text.lower()
    profiles = {p["name"]: p["markdown_description"] for p in settings["chatProfiles"]}
    assert "Echoes settings and what it saw." in profiles["echo"]
    assert {"chart", "refund", "tools", "plain"} <= set(profiles)
    assert "LangGraph OpenAI Serve" in settings["markdown"]
    # No "citations" graph here: the first listed is the default; each
    # profile has our icon (Chainlit then shows its text on an empty chat).
    listed = settings["chatProfiles"]
    assert [p["name"] for p in listed if p["default"]] == [listed[0]["name"]]
    assert {p["icon"] for p in listed} == {"/public/lgos.svg"}
    assert "<title>LGOS</title>" in page.text
    assert 'href="/public/lgos.css"' in page.text
    for asset in ("lgos.css", "lgos.svg", "logo_light.svg", "favicon.svg"):
        assert httpx.get(f"{url}/public/{asset}", timeout=10).status_code == 200
    # Chainlit's files went to the home folder, not the working directory.
    assert (home / ".chainlit" / "config.toml").is_file()
    assert list(cwd.iterdir()) == []


def test_without_users_each_browser_is_a_guest_with_its_own_history(ui):
    url, home, _ = ui
    auth = httpx.get(f"{url}/auth/config", timeout=10).json()
    with (
        httpx.Client(base_url=url, timeout=10) as first,
        httpx.Client(base_url=url, timeout=10) as second,
    ):
        first.post("/auth/header").raise_for_status()
        second.post("/auth/header").raise_for_status()
        me = first.get("/user").json()
        # The session cookie keeps the identity: no new guest per request.
        again = first.get("/user").json()
        other = second.get("/user").json()
        threads = first.post(
            "/project/threads", json={"pagination": {"first": 5}, "filter": {}}
        )

    # No login page: Chainlit's login route signs a guest in by itself.
    assert auth["requireLogin"] is True
    assert auth["headerAuth"] is True
    assert auth["passwordAuth"] is False
    assert me["identifier"].startswith("guest-")
    assert me["display_name"] == "Guest"
    assert again["identifier"] == me["identifier"]
    assert other["identifier"] != me["identifier"]
    assert threads.status_code == 200
    assert (home / ".auth-secret").is_file()


def test_with_history_off_there_is_no_sign_in(lgos, files_server, tmp_path):
    with start_ui(
        lgos.base_url, files_server.openai_url, tmp_path, LGOS_CHAINLIT_HISTORY="false"
    ) as ui:
        url, home, _ = ui
        auth = httpx.get(f"{url}/auth/config", timeout=10).json()
        settings = httpx.get(f"{url}/project/settings", timeout=10)

    assert not auth.get("requireLogin")
    assert settings.status_code == 200
    assert not (home / ".auth-secret").exists()


def test_with_users_the_ui_asks_for_login_and_keeps_history(
    lgos, files_server, tmp_path
):
    users = json.dumps({"alice": "wonderland"})
    with start_ui(
        lgos.base_url, files_server.openai_url, tmp_path, LGOS_CHAINLIT_USERS=users
    ) as started:
        url, home, _ = started
        auth = httpx.get(f"{url}/auth/config", timeout=10).json()
        refused = httpx.post(
            f"{url}/login", data={"username": "alice", "password": "x"}, timeout=10
        )
        with httpx.Client(base_url=url, timeout=10) as browser:
            accepted = browser.post(
                "/login", data={"username": "alice", "password": "wonderland"}
            )
            threads = browser.post(
                "/project/threads", json={"pagination": {"first": 5}, "filter": {}}
            )

    assert auth["requireLogin"] is True
    assert auth["passwordAuth"] is True
    assert refused.status_code == 401
    assert accepted.status_code == 200
    assert threads.status_code == 200
    assert threads.json()["data"] == []
    secret = home / ".auth-secret"
    assert secret.stat().st_mode & 0o777 == 0o600
    assert len(secret.read_text()) > 40


def test_the_command_runs_chainlit_headless_on_loopback():
    command = chainlit_command("127.0.0.1", 8200)

    assert command[1:5] == ["-m", "chainlit", "run", str(APP)]
    assert command[5:] == ["--headless", "--host", "127.0.0.1", "--port", "8200"]
    assert APP.is_file()


def test_the_home_folder_gets_a_welcome_page_once(tmp_path):
    home = prepare_home(tmp_path / "ui")
    (home / "chainlit.md").write_text("mine")

    assert prepare_home(tmp_path / "ui") == home
    assert (home / "chainlit.md").read_text() == "mine"
    assert home.is_absolute()


def test_bad_settings_stop_the_command_naming_the_variable(monkeypatch, capsys):
    monkeypatch.setenv("LGOS_CHAINLIT_GATEWAY_URL", "http://gateway:4000")

    with pytest.raises(SystemExit) as stopped:
        main(["--port", "1"])

    assert stopped.value.code == 2
    assert "GATEWAY_URL" in capsys.readouterr().err
    assert Path.cwd().exists()
