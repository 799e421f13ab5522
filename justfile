# Every task a person runs. `uv run just --list` shows them.

set shell := ["bash", "-euo", "pipefail", "-c"]

# Workspace members that carry tests (each has its own tests/ folder).
members := "packages/langgraph-openai-serve services/files-api services/model-sync demos"

# uv sets UV to its own path in `uv run`; fall back to the one on PATH.
uv := env("UV", "uv")

default:
    @just --list

# Start everything the repository has: today the demo API on http://127.0.0.1:8000/v1
up host="127.0.0.1" port="8000":
    {{uv}} sync --frozen
    @echo "LGOS demo API: http://{{host}}:{{port}}/v1 (models: echo, planner). Ctrl+C stops it."
    {{uv}} run lgos-demo-api --host {{host}} --port {{port}}

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
        services/model-sync/src demos/src

# Format and auto-fix
fmt:
    {{uv}} run --frozen ruff format .
    {{uv}} run --frozen ruff check --fix .

# Isolated tool environments the tests start (LiteLLM, pinned, outside the lock)
tools:
    UV={{uv}} bash scripts/install-litellm.sh
