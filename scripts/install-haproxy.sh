#!/usr/bin/env bash
# Make sure Debian's HAProxy is installed for the fleet suite, which runs a
# rolling upgrade behind a real load balancer (the tests start their own
# haproxy process with their own configuration; the package's service is not
# used).
set -euo pipefail
exec bash "$(dirname "$0")/install-debian-package.sh" haproxy haproxy
