#!/usr/bin/env bash
# Make sure Debian's Prometheus is installed: the native stack runs it
# (`just up` scrapes the API, the workers and LiteLLM), and the deploy tests
# check every alert rule and dashboard query with its `promtool` (the same
# package). LGOS runs Prometheus as its own process; the package's service is
# not started.
set -euo pipefail
exec bash "$(dirname "$0")/install-debian-package.sh" promtool prometheus
