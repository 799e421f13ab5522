#!/usr/bin/env bash
# Make sure Debian's Prometheus is installed: the native stack runs it
# (`just up` scrapes the API, the workers and LiteLLM), and the deploy tests
# check every alert rule and dashboard query with its `promtool`.
#
# Idempotent: does nothing when `prometheus` and `promtool` are on PATH.
# Installs with apt-get as root, or through sudo when it works without a
# password; otherwise prints the command to run and fails. The package's
# own service is not started: LGOS runs Prometheus as its own process.
set -euo pipefail

if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; then
    echo "prometheus already installed: $(command -v prometheus)"
    exit 0
fi

if [[ "$(id -u)" == "0" ]]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
else
    echo "Prometheus is missing. Install Debian's package, then run again:" >&2
    echo "    sudo apt-get update && sudo apt-get install -y prometheus" >&2
    exit 1
fi

echo "installing Debian's prometheus package"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -q
# policy-rc.d: install the binaries without starting the packaged service
# (it would bind :9090 and scrape itself; LGOS starts its own Prometheus).
policy=/usr/sbin/policy-rc.d
made_policy=false
if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee "$policy" >/dev/null
    "${as_root[@]}" chmod +x "$policy"
    made_policy=true
fi
trap '[[ $made_policy == true ]] && "${as_root[@]}" rm -f "$policy"' EXIT
"${as_root[@]}" apt-get install -y -q --no-install-recommends prometheus
echo "prometheus installed: $(command -v prometheus) ($(prometheus --version 2>&1 | head -1))"
