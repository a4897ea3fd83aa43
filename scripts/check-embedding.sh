#!/usr/bin/env bash
# Uses Boardwalk the way another Swift package would: makes a consumer package in a temporary folder that
# depends on a tagged bare clone of this checkout by version (`from: "0.1.0"`), builds it in release, runs the
# embedding examples of README.md ("Embed it") and docs/storage.md, and compares what each prints with the
# output block the docs show under it. CI runs it; a failure means the library cannot be embedded as documented.
#
# The examples are the fenced code after `<!-- embed-example: NAME -->`, their expected output the fenced block
# after `<!-- embed-output: NAME -->`.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
version=0.1.0
work=$(mktemp -d "${TMPDIR:-/tmp}/boardwalk-consumer.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The fenced block after the marker line `<!-- embed-KIND: NAME -->` in FILE.
extract() {
    awk -v marker="<!-- embed-$2: $3 -->" '
        $0 == marker { armed = 1; next }
        armed && /^```/ { if (inside) exit; inside = 1; next }
        inside { print }
    ' "$1"
}

# A bare clone of what is committed, tagged with the version the consumer asks for.
git clone -q --bare "$root" "$work/Boardwalk.git"
git -C "$work/Boardwalk.git" tag -f "$version" HEAD >/dev/null

mkdir -p "$work/consumer"
examples=(readme:README.md storage:docs/storage.md)
targets=""
for pair in "${examples[@]}"; do
    name=${pair%%:*} file=${pair#*:}
    dir="$work/consumer/Sources/Example-$name"
    mkdir -p "$dir"
    extract "$root/$file" example "$name" >"$dir/main.swift"
    extract "$root/$file" output "$name" >"$work/expected-$name.txt"
    if [ ! -s "$dir/main.swift" ] || [ ! -s "$work/expected-$name.txt" ]; then
        echo "check-embedding: $file has no '<!-- embed-example: $name -->' code block with an 'embed-output' block" >&2
        exit 1
    fi
    targets+="        .executableTarget(name: \"Example-$name\", dependencies: [.product(name: \"Boardwalk\", package: \"Boardwalk\")]),
"
done

cat >"$work/consumer/Package.swift" <<SWIFT
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Consumer",
    dependencies: [.package(url: "file://$work/Boardwalk.git", from: "$version")],
    targets: [
$targets    ]
)
SWIFT

echo "check-embedding: building a consumer of Boardwalk $version in release"
swift build --package-path "$work/consumer" -c release 2>&1 | tail -n 3

status=0
for pair in "${examples[@]}"; do
    name=${pair%%:*} file=${pair#*:}
    run="$work/run-$name"
    mkdir -p "$run"
    if ! (cd "$run" && "$work/consumer/.build/release/Example-$name") >"$work/actual-$name.txt" 2>"$work/stderr-$name.txt"; then
        echo "check-embedding: the $file example failed:" >&2
        cat "$work/stderr-$name.txt" >&2
        status=1
    elif ! diff -u "$work/expected-$name.txt" "$work/actual-$name.txt" >&2; then
        echo "check-embedding: the $file example prints something else than the docs show (diff above)" >&2
        status=1
    else
        echo "check-embedding: the $file example prints what the docs show"
    fi
done
exit $status
