"""Readiness and startup: the bucket is made at startup; /health says whether
the store answers, and only that (the details go to the log)."""

from __future__ import annotations

import httpx


def test_health_is_ok_when_the_store_answers(http: httpx.Client) -> None:
    response = http.get("/health")

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}  # nothing about the store


def test_startup_creates_a_missing_bucket(launch, s3) -> None:
    # Waits only for the port: the bucket must exist before any request.
    fresh = launch(wait_healthy=False)

    s3.head_bucket(Bucket=fresh.bucket)


def test_unreachable_store_fails_health_with_a_code_and_logs_the_cause(
    launch,
) -> None:
    # Port 1 on loopback refuses connections at once.
    down = launch(
        wait_healthy=False, S3_ENDPOINT="http://127.0.0.1:1", S3_MAX_ATTEMPTS="1"
    )

    response = httpx.get(f"{down.url}/health", timeout=30)

    # Unauthenticated: the code says why, the store's address stays in the log.
    assert response.status_code == 503
    error = response.json()["error"]
    assert (error["type"], error["code"]) == ("server_error", "store_unavailable")
    assert "127.0.0.1:1" not in response.text
    assert down.bucket not in response.text
    logged = down.log.read_text()
    assert "health.store_unavailable" in logged
    assert "http://127.0.0.1:1" in logged
    assert "unreachable" in logged


def test_api_calls_answer_503_when_the_store_is_down(launch) -> None:
    down = launch(
        wait_healthy=False, S3_ENDPOINT="http://127.0.0.1:1", S3_MAX_ATTEMPTS="1"
    )

    response = httpx.get(
        f"{down.url}/v1/files",
        headers={"Authorization": "Bearer sk-test-000"},
        timeout=30,
    )

    assert response.status_code == 503
    # Store details stay in the server log, not in API answers.
    assert "127.0.0.1:1" not in response.json()["error"]["message"]


def test_wrong_store_credentials_fail_health_and_log_the_refusal(launch) -> None:
    refused = launch(wait_healthy=False, S3_SECRET_KEY="not-the-secret")

    response = httpx.get(f"{refused.url}/health", timeout=30)

    assert response.status_code == 503
    assert response.json()["error"]["code"] == "store_unavailable"
    assert "refused" not in response.text
    assert "refused" in refused.log.read_text()
