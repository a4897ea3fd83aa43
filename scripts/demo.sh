#!/usr/bin/env bash
# The first command of the README: installs the Debian packages the build needs when they are missing, builds
# `boardwalk` in release and runs its demo, which generates a demo store (./boardwalk.db unless --db says
# otherwise) and answers questions on it. Arguments go to `boardwalk demo` (see `boardwalk demo --help`).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/scripts/setup.sh"
boardwalk_setup
swift build --package-path "$root" -c release --static-swift-stdlib --product boardwalk
exec "$root/.build/release/boardwalk" demo "$@"
