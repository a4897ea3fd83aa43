#!/usr/bin/env bash
# The second command of the README: installs the Debian packages the build needs when they are missing, then
# runs the whole test suite (`swift test`). Arguments go to `swift test` (e.g. `--filter StoreTests`).
# CI (.ci/run) calls this first.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
source "$root/scripts/setup.sh"
boardwalk_setup
cd "$root"
exec swift test "$@"
