"""The real components start the way the member suites use them."""

from __future__ import annotations

from pathlib import Path

import httpx
from lgos_testkit import (
    ThreadServer,
    files_api,
    litellm,
    litellm_config,
    seaweedfs,
    wait_until,
)
from lgos_testkit.haproxy import haproxy
from openai import OpenAI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route


def test_litellm_starts_on_a_one_model_config_and_lists_it(tmp_path: Path):
    config = tmp_path / "litellm.yaml"
    config.write_text(
        litellm_config(
            [
                {
                    "model_name": "kit/echo",
                    "litellm_params": {
                        "model": "openai/echo",
                        "api_base": "http://127.0.0.1:9/v1",
                        "api_key": "no-key",
                    },
                }
            ]
        )
    )

    with litellm(config, "sk-testkit-master") as proxy:
        listed = httpx.get(f"{proxy.openai_url}/models", headers=proxy.auth)
        refused = httpx.get(
            f"{proxy.openai_url}/models", headers={"Authorization": "Bearer sk-no"}
        )
        pid = proxy.process.pid

    assert [model["id"] for model in listed.json()["data"]] == ["kit/echo"]
    assert refused.status_code >= 400
    assert proxy.process.exited(), f"LiteLLM {pid} still runs"
    assert (tmp_path / "litellm.log").stat().st_size > 0


def test_files_api_on_seaweedfs_stores_and_returns_an_upload(tmp_path: Path):
    keys = {"sk-kit-a": "owner-a", "sk-kit-b": "owner-b"}
    with (
        seaweedfs(tmp_path, "kit-access", "kit-secret-key") as s3,
        files_api(s3, tmp_path / "files.log", bucket="kit-files", keys=keys) as api,
        OpenAI(base_url=api.openai_url, api_key="sk-kit-a", max_retries=0) as owner,
        OpenAI(base_url=api.openai_url, api_key="sk-kit-b", max_retries=0) as other,
    ):
        uploaded = owner.files.create(
            file=("notes.txt", b"kept in S3"), purpose="user_data"
        )
        content = owner.files.content(uploaded.id).read()
        others_view = [item.id for item in other.files.list()]

    assert content == b"kept in S3"
    assert uploaded.id not in others_view
    assert api.process.exited()
    assert not (tmp_path / "data").exists()
    assert (tmp_path / "weed.out").exists()


def test_haproxy_routes_around_a_backend_that_turns_not_ready(tmp_path: Path):
    ready = {"first": True, "second": True}
    with (
        ThreadServer(_backend("first", ready)) as first,
        ThreadServer(_backend("second", ready)) as second,
        haproxy(tmp_path, [first.port, second.port], health_path="/ready") as lb,
    ):
        wait_until(lambda: lb.backends_up() == 2, 30, "both backends up")
        both = {httpx.get(f"{lb.url}/name").text for _ in range(4)}
        ready["first"] = False
        wait_until(lambda: lb.backends_up() == 1, 30, "the first backend out")
        only = {httpx.get(f"{lb.url}/name").text for _ in range(4)}

    assert both == {"first", "second"}
    assert only == {"second"}
    assert lb.process.exited()


def _backend(name: str, ready: dict[str, bool]) -> Starlette:
    async def answer_name(request: Request) -> PlainTextResponse:
        return PlainTextResponse(name)

    async def readiness(request: Request) -> PlainTextResponse:
        return PlainTextResponse(name, status_code=200 if ready[name] else 503)

    return Starlette(routes=[Route("/name", answer_name), Route("/ready", readiness)])
