#!/usr/bin/env bash
# Installs the Debian packages Boardwalk builds against, when they are missing: as root directly, otherwise
# through sudo where it exists. Sourced by scripts/demo.sh and scripts/test.sh; run it alone to set up a machine.
#
#   scripts/setup.sh [EXTRA-PACKAGE...]     also install the named packages (CI adds python3-venv)
set -euo pipefail

boardwalk_packages=(liblmdb-dev libsimdjson-dev libedit-dev libisal-dev libsqlite3-dev zlib1g-dev libzstd-dev tzdata pkg-config)

boardwalk_setup() {
    local wanted=("${boardwalk_packages[@]}" "$@") missing=() pkg
    if ! command -v dpkg >/dev/null 2>&1; then
        echo "setup: not a Debian system; install these (or your system's equivalents) yourself: ${wanted[*]}" >&2
        return 0
    fi
    for pkg in "${wanted[@]}"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0

    local run=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then
            run=(sudo)
        else
            echo "setup: missing Debian packages: ${missing[*]}" >&2
            echo "setup: not root and no sudo here; as root run: apt-get install -y ${missing[*]}" >&2
            return 1
        fi
    fi
    echo "setup: installing ${missing[*]}" >&2
    "${run[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${run[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    boardwalk_setup "$@"
fi
