#!/usr/bin/env bash
# Install the JavaScript OpenAI clients the library's JS suite drives
# (packages/langgraph-openai-serve/tests/js_clients: the openai npm SDK, the
# Vercel AI SDK and LangChain.js, pinned by its package-lock.json) with npm ci;
# see install-npm-lock.sh. The suite itself runs offline.
set -euo pipefail
exec bash "$(dirname "$0")/install-npm-lock.sh" \
    packages/langgraph-openai-serve/tests/js_clients "JavaScript clients"
