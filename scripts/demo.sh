#!/usr/bin/env bash
# `make demo`: the lab matrix, headless, into reports/demo.json and reports/demo.html.
#
# A warm lab (every image the lab matrix runs on built from its current recipe and
# published): one run.
# A cold lab answers early instead of after the whole build: the lab is built in waves, in
# the order the rows need their images (`ecoready lab build --matrix M --rows ...` builds
# what those rows run on and nothing else), and each wave's cells run while the next wave
# builds:
#   1. the host's own arch, the servers and every row on their images (the first screen)
#   2. the host's own arch, the rest (tools, connectors, the language runtimes)
#   3. the emulated arch, the servers and the rows on their images
#   4. the emulated arch, the rest, then the gap rows (made from both arches' MariaDB)
# The reports are merged into one: the same grid as one run of the whole matrix.
#
# Exit 0 or 1 (not every cell is ready: the lab's gap-* rows are not, on purpose) is a
# demo that worked; anything else is passed on. Each `demo:` line says the minutes since
# the start (bench/cold_demo.py reads them).
set -uo pipefail
cd "$(dirname "$0")/.."

ECOREADY=.venv/bin/ecoready
PY=.venv/bin/python
MATRIX=${DEMO_MATRIX:-containers/lab.toml}  # bench/cold_demo.py: a copy naming its own registry
OUT=${DEMO_OUT:-reports}  # bench/cold_demo.py writes its own elsewhere
mkdir -p "$OUT"
START=$SECONDS

say() { printf 'demo: [%d:%02d] %s\n' $(((SECONDS - START) / 60)) $(((SECONDS - START) % 60)) "$*" >&2; }

# 0 and 1 are answers; anything else ends the demo with that code
answered() {
    local code=$1 what=$2
    if [ "$code" -gt 1 ]; then
        say "$what failed (exit $code)"
        exit "$code"
    fi
}

"$ECOREADY" lab up >/dev/null 2>&1 || true  # the registry, after a reboot: else the lab reads as not built
if "$ECOREADY" lab status --matrix "$MATRIX" >/dev/null 2>&1; then
    say "the lab is built: one run of every cell"
    "$ECOREADY" run --headless --matrix "$MATRIX" --json "$OUT/demo.json" --html "$OUT/demo.html"
    answered $? "the run"
    say "reports: $OUT/demo.json $OUT/demo.html"
    exit 0
fi

# the host's arch as ecoready names it (engine/platform.py), so it is decided in one place
native=$($PY -c 'from ecoready.engine.platform import host_arch; print(host_arch())')
case "$native" in
    amd64) other=arm64 ;;
    arm64) other=amd64 ;;
    *) say "the lab is built for amd64 and arm64; this host is $native"; exit 3 ;;
esac

# the rows of each wave, from the matrix (app/lab/needs.py decides the first wave)
read -r first rest gaps < <($PY - "$MATRIX" <<'EOF'
import sys
from ecoready.lab.needs import first_wave, needs
from ecoready.matrix.load import load
matrix = load(sys.argv[1])
first = first_wave(matrix)
gaps = [c.id for c in matrix.components if needs(matrix, [c.id]).gaps]
rest = [c.id for c in matrix.components if c.id not in first and c.id not in gaps]
print(",".join(first), ",".join(rest), ",".join(gaps))
EOF
)
WAVE_ARCH=("$native" "$native" "$other" "$other")
WAVE_ROWS=("$first" "$rest" "$first" "$rest,$gaps")
WAVE_WHAT=("$native: the servers and the rows on their images" "$native: the rest" \
    "$other: the servers and the rows on their images" "$other: the rest and the gap rows")

builder=""
# a demo stopped by Ctrl-C or SIGTERM stops the background build too (it cleans up after itself)
stop_builder() { [ -n "$builder" ] && kill -TERM "$builder" 2>/dev/null && wait "$builder"; }
trap 'stop_builder; exit 130' INT
trap 'stop_builder; exit 143' TERM

start_build() {  # wave index, in the background: $builder
    local i=$1
    say "building wave $((i + 1)) (${WAVE_WHAT[$i]}) in the background (log: $OUT/lab-build-$((i + 1)).log)"
    "$ECOREADY" lab build --arch "${WAVE_ARCH[$i]}" --matrix "$MATRIX" --rows "${WAVE_ROWS[$i]}" \
        >"$OUT/lab-build-$((i + 1)).log" 2>&1 &
    builder=$!
}

wait_build() {  # wave index
    local i=$1 built
    wait "$builder"
    built=$?
    builder=""
    if [ "$built" -ne 0 ]; then
        tail -n 15 "$OUT/lab-build-$((i + 1)).log" >&2
        say "lab build of wave $((i + 1)) failed (exit $built): what answered is in $OUT/demo-wave-*.json"
        exit "$built"
    fi
    say "wave $((i + 1)) built: $(tail -n 1 "$OUT/lab-build-$((i + 1)).log")"
}

say "the lab is not (all) built: it is built in 4 waves, each wave's cells run while the next builds"
say "building wave 1 (${WAVE_WHAT[0]})"
"$ECOREADY" lab build --arch "$native" --matrix "$MATRIX" --rows "$first" || {
    code=$?
    say "lab build of wave 1 failed (exit $code)"
    exit "$code"
}

reports=()
for i in 0 1 2 3; do
    if [ "$i" -lt 3 ]; then
        start_build $((i + 1))
    fi
    report="$OUT/demo-wave-$((i + 1)).json"
    reports+=("$report")
    if [ "$i" -eq 0 ]; then  # the first answer, on the terminal as it comes
        "$ECOREADY" run --headless --matrix "$MATRIX" --arch "$native" --only "$first" --json "$report"
        answered $? "the run of wave 1"
    else  # the rest quietly (progress in a log): the merged grid below says it all once
        "$ECOREADY" run --headless --matrix "$MATRIX" --arch "${WAVE_ARCH[$i]}" --only "${WAVE_ROWS[$i]%,"$gaps"}" \
            --json "$report" >>"$OUT/demo-rest.log" 2>&1
        answered $? "the run of wave $((i + 1)) (see $OUT/demo-rest.log)"
    fi
    say "wave $((i + 1)) answered (${WAVE_WHAT[$i]}): $report"
    if [ "$i" -lt 3 ]; then
        wait_build $((i + 1))
    fi
done
if [ -n "$gaps" ]; then  # both arches of the gap rows, now that both of their source are published
    "$ECOREADY" run --headless --matrix "$MATRIX" --only "$gaps" --json "$OUT/demo-gaps.json" >>"$OUT/demo-rest.log" 2>&1
    answered $? "the gap rows' run (see $OUT/demo-rest.log)"
    reports+=("$OUT/demo-gaps.json")
fi
trap - INT TERM

"$ECOREADY" report --merge "${reports[@]}" --json "$OUT/demo.json" --html "$OUT/demo.html"
answered $? "merging the reports"
say "all arches, merged:"
"$ECOREADY" report "$OUT/demo.json"
say "reports: $OUT/demo.json $OUT/demo.html"
