#!/usr/bin/env bash
# Make sure a command from a Debian package is installed:
#     install-debian-package.sh COMMAND PACKAGE
#
# Idempotent: does nothing when COMMAND is already on PATH (or in /usr/sbin,
# where Debian puts daemons). Installs PACKAGE with apt-get as root, or
# through sudo when it works without a password; otherwise prints the command
# to run and fails. A service the package brings is not started: the tests
# run the programs as their own processes with their own configuration.
set -euo pipefail

command_name="$1"
package="$2"
export PATH="$PATH:/usr/sbin:/sbin"

if command -v "$command_name" >/dev/null 2>&1; then
    echo "$package already installed: $(command -v "$command_name")"
    exit 0
fi

if [[ "$(id -u)" == "0" ]]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
else
    echo "$package is missing. Install Debian's package, then run again:" >&2
    echo "    sudo apt-get update && sudo apt-get install -y $package" >&2
    exit 1
fi

echo "installing Debian's $package package"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -q
# policy-rc.d says "no" to starting services while it exists.
policy=/usr/sbin/policy-rc.d
made_policy=false
if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee "$policy" >/dev/null
    "${as_root[@]}" chmod +x "$policy"
    made_policy=true
fi
trap '[[ $made_policy == true ]] && "${as_root[@]}" rm -f "$policy"' EXIT
"${as_root[@]}" apt-get install -y -q --no-install-recommends "$package"
echo "$package installed: $(command -v "$command_name")"
