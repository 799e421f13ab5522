# Every task a person runs. `uv run just --list` shows them.

set shell := ["bash", "-euo", "pipefail", "-c"]

# Workspace members that carry tests (each has its own tests/ folder).
members := "packages/langgraph-openai-serve services/files-api services/model-sync services/chainlit-ui services/open-webui demos bench"

# uv sets UV to its own path in `uv run`; fall back to the one on PATH.
uv := env("UV", "uv")

default:
    @just --list

# Start every demo process natively; the demo API on http://127.0.0.1:8000/v1. Ctrl+C stops all
up host="127.0.0.1" port="8000":
    {{uv}} sync --frozen
    {{uv}} run --frozen lgos-demo-stack --host {{host}} --port {{port}} --state-dir .state

# Lint, type-check, then run every member's tests
test: lint tools
    #!/usr/bin/env bash
    set -euo pipefail
    for member in {{members}}; do
        echo "== tests: $member"
        {{uv}} run --frozen pytest "$member/tests" -q
    done

# ruff (lint + format check) and mypy
lint:
    {{uv}} run --frozen ruff check .
    {{uv}} run --frozen ruff format --check .
    {{uv}} run --frozen mypy packages/langgraph-openai-serve/src services/files-api/src \
        services/model-sync/src services/chainlit-ui/src services/open-webui/src \
        demos/src bench/src e2e/src

# Format and auto-fix
fmt:
    {{uv}} run --frozen ruff format .
    {{uv}} run --frozen ruff check --fix .

# Isolated tool environments the tests start (LiteLLM, Open WebUI: pinned, outside the lock)
tools:
    UV={{uv}} bash scripts/install-litellm.sh
    UV={{uv}} bash scripts/install-open-webui.sh

# Browser journeys (Playwright, Debian's Chromium) against the whole native stack; failures in e2e/results/
e2e *args: tools
    bash scripts/install-chromium.sh
    {{uv}} run --frozen pytest e2e/tests -q {{args}}

# LGOS against a hand-written baseline; writes bench/results/<timestamp>-<mode>.{md,json}
bench *args:
    {{uv}} run --frozen lgos-bench --profile {{args}}
