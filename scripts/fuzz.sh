#!/usr/bin/env bash
# Builds the libFuzzer targets (Fuzz/, a separate package: the codec's record and batch readers, the store's value
# formats and the JSON reader's fast path against simdjson On-Demand) and runs them.
#
#   scripts/fuzz.sh                 run each target for 600 s (override with --time SECONDS)
#   scripts/fuzz.sh --ci            run each target for 30 s; what CI calls
#   scripts/fuzz.sh FuzzRecord      run only the named target(s): FuzzRecord, FuzzBatch, FuzzBlock, FuzzJSON
#
# Each run starts from a copy of the checked-in seed corpus (Fuzz/Corpus/<record|batch|block|json>), so the checked-in
# corpus never changes behind your back; pass --keep to leave the grown corpus and any crash inputs in the
# printed work directory. Exit status is nonzero if any target finds a crash, a leak or a timeout.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=600
keep=no
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
        --ci) seconds=30 ;;
        --time) seconds="$2"; shift ;;
        --keep) keep=yes ;;
        -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        FuzzRecord|FuzzBatch|FuzzBlock|FuzzJSON) targets+=("$1") ;;
        *) echo "Error: unknown argument '$1'" >&2; echo "Usage: scripts/fuzz.sh [--ci] [--time SECONDS] [--keep] [FuzzRecord] [FuzzBatch] [FuzzBlock] [FuzzJSON]" >&2; exit 64 ;;
    esac
    shift
done
[ ${#targets[@]} -gt 0 ] || targets=(FuzzRecord FuzzBatch FuzzBlock FuzzJSON)

echo "fuzz: building Fuzz/ with -sanitize=fuzzer,address"
# -Xcxx: the C++ of the JSON reader (Sources/CSimdjson) gets AddressSanitizer and libFuzzer's coverage too, so a
# read past a line's padding there is reported and the fast path's branches guide the fuzzer.
(cd Fuzz && swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library \
    -Xcxx -fsanitize=fuzzer-no-link,address 2>&1 \
    | grep -v "Cannot export local symbol '__asan_extra_spill_area'")

work=$(mktemp -d "${TMPDIR:-/tmp}/boardwalk-fuzz.XXXXXX")
status=0
for target in "${targets[@]}"; do
    case "$target" in
        FuzzRecord) seeds=Fuzz/Corpus/record ;;
        FuzzBatch) seeds=Fuzz/Corpus/batch ;;
        FuzzBlock) seeds=Fuzz/Corpus/block ;;
        FuzzJSON) seeds=Fuzz/Corpus/json ;;
    esac
    mkdir -p "$work/$target/corpus" "$work/$target/artifacts"
    cp "$seeds"/* "$work/$target/corpus/"
    echo "fuzz: $target for ${seconds}s from $(ls "$seeds" | wc -l) seeds"
    # Swift's backtracer and AddressSanitizer both handle the crash signal; with both on, a crash hangs.
    if ! SWIFT_BACKTRACE=enable=no "Fuzz/.build/release/$target" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 \
        -artifact_prefix="$work/$target/artifacts/" "$work/$target/corpus" >"$work/$target/log" 2>&1; then
        status=1
        echo "fuzz: $target FAILED; log and crash input in $work/$target" >&2
        tail -40 "$work/$target/log" >&2
        keep=yes
    fi
    grep -E "^stat::(number_of_executed_units|peak_rss_mb|new_units_added)|^Done " "$work/$target/log" | sed "s/^/fuzz: $target: /"
done
if [ "$keep" = yes ]; then echo "fuzz: work directory kept: $work"; else rm -rf "$work"; fi
exit $status
