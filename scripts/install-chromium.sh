#!/usr/bin/env bash
# Make sure Debian's Chromium is installed for the Playwright e2e suite.
#
# Playwright's own browser downloads cannot be fetched here, so the suite
# drives the distribution's `chromium` package through `executable_path`.
set -euo pipefail
exec bash "$(dirname "$0")/install-debian-package.sh" chromium chromium
