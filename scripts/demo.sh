#!/usr/bin/env bash
# `make demo`: the lab matrix, headless, into reports/demo.json and reports/demo.html.
#
# A warm lab (every image built from its current recipe and published): one run.
# A cold lab answers early instead of after the whole build: the host's own arch builds
# first (native, a few minutes), its cells run while the emulated arch builds beside
# them, then the emulated cells and the gap rows run and the reports are merged into one.
#
# Exit 0 or 1 (not every cell is ready: the lab's gap-* rows are not, on purpose) is a
# demo that worked; anything else is passed on.
set -uo pipefail
cd "$(dirname "$0")/.."

ECOREADY=.venv/bin/ecoready
MATRIX=containers/lab.toml
OUT=reports
mkdir -p "$OUT"

say() { echo "demo: $*" >&2; }

# 0 and 1 are answers; anything else ends the demo with that code
answered() {
    local code=$1 what=$2
    if [ "$code" -gt 1 ]; then
        say "$what failed (exit $code)"
        exit "$code"
    fi
}

"$ECOREADY" lab up >/dev/null 2>&1 || true  # the registry, after a reboot: else the lab reads as not built
if "$ECOREADY" lab status >/dev/null 2>&1; then
    say "the lab is built: one run of every cell"
    "$ECOREADY" run --headless --matrix "$MATRIX" --json "$OUT/demo.json" --html "$OUT/demo.html"
    answered $? "the run"
    say "reports: $OUT/demo.json $OUT/demo.html"
    exit 0
fi

# the host's arch as ecoready names it (engine/platform.py), so it is decided in one place
native=$(.venv/bin/python -c 'from ecoready.engine.platform import host_arch; print(host_arch())')
case "$native" in
    amd64) other=arm64 ;;
    arm64) other=amd64 ;;
    *) say "the lab is built for amd64 and arm64; this host is $native"; exit 3 ;;
esac

# The deliberate gaps (gap-* rows) are made from both arches' MariaDB: they are published
# by the second build, so their rows run after it, on both arches.
gap_rows=$(sed -n 's/^id = "\(gap-[^"]*\)"$/\1/p' "$MATRIX" | paste -sd, -)
component_rows=$(sed -n 's/^id = "\([^"]*\)"$/\1/p' "$MATRIX" | grep -v '^gap-' | paste -sd, -)

say "the lab is not (all) built: $native first, then its cells run while $other builds"
"$ECOREADY" lab build --arch "$native" || {
    code=$?
    say "lab build --arch $native failed (exit $code)"
    exit "$code"
}

build_log="$OUT/lab-build-$other.log"
say "building $other in the background (log: $build_log)"
"$ECOREADY" lab build --arch "$other" >"$build_log" 2>&1 &
builder=$!
# a demo stopped by Ctrl-C or SIGTERM stops the background build too (it cleans up after itself)
trap 'kill -TERM "$builder" 2>/dev/null; wait "$builder"; exit 130' INT
trap 'kill -TERM "$builder" 2>/dev/null; wait "$builder"; exit 143' TERM

"$ECOREADY" run --headless --matrix "$MATRIX" --arch "$native" --only "$component_rows" --json "$OUT/demo-$native.json"
answered $? "the $native run"
say "$native answered (reports: $OUT/demo-$native.json); waiting for the $other build"

wait "$builder"
built=$?
trap - INT TERM
if [ "$built" -ne 0 ]; then
    tail -n 15 "$build_log" >&2
    say "lab build --arch $other failed (exit $built): the $native answer stands in $OUT/demo-$native.json"
    exit "$built"
fi
tail -n 1 "$build_log" >&2

# the rest runs quietly (its progress in a log): the merged grid below says it all once
say "running the $other cells and the gap rows (progress: $OUT/demo-rest.log)"
"$ECOREADY" run --headless --matrix "$MATRIX" --arch "$other" --json "$OUT/demo-$other.json" >"$OUT/demo-rest.log" 2>&1
answered $? "the $other run (see $OUT/demo-rest.log)"
"$ECOREADY" run --headless --matrix "$MATRIX" --arch "$native" --only "$gap_rows" --json "$OUT/demo-gaps.json" \
    >>"$OUT/demo-rest.log" 2>&1
answered $? "the gap rows' $native run (see $OUT/demo-rest.log)"

"$ECOREADY" report --merge "$OUT/demo-$native.json" "$OUT/demo-$other.json" "$OUT/demo-gaps.json" \
    --json "$OUT/demo.json" --html "$OUT/demo.html"
answered $? "merging the reports"
say "all arches, merged:"
"$ECOREADY" report "$OUT/demo.json"
say "reports: $OUT/demo.json $OUT/demo.html"
