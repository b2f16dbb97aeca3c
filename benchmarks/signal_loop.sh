#!/usr/bin/env bash
# Run the signal tests N times (default 30) and count the loops that passed: a flaky stop shows up here rather
# than in a landing (docs/testing.md, "Signals"). Each loop is one pytest process, one after the other:
#   tests/engines/test_signals.py (the Spark engine stopped at named moments, start-up, two Ctrl-C's, compare) and the
#   existing signal tests of tests/engines/test_engine_core.py and tests/cli/test_hostile_input.py.
# Usage: benchmarks/signal_loop.sh [N] [pytest options...]   (from the repository root; JBODCHECK_PROFILE applies)
# Prints one line per loop and "K/N passed"; the log of a failed loop is kept (its path is printed).
# Exit 0 when every loop passed, else 1.
set -u
n=${1:-30}
shift || true
cd "$(dirname "$0")/.." || exit 2
logs=$(mktemp -d "${TMPDIR:-/tmp}/signal-loop.XXXXXX")
passed=0
for i in $(seq 1 "$n"); do
    start=$(date +%s)
    if python3 -m pytest -q -p no:cacheprovider tests/engines/test_signals.py \
            "tests/engines/test_engine_core.py::test_a_signal_stops_the_search_with_a_partial_report" \
            "tests/engines/test_engine_core.py::test_spark_stops_on_a_signal_with_the_last_complete_level" \
            "tests/cli/test_hostile_input.py::test_an_interrupted_search_exits_128_plus_the_signal_after_writing_the_report" \
            "tests/cli/test_hostile_input.py::test_a_keyboard_interrupt_that_escapes_exits_130" \
            "$@" > "$logs/loop-$i.log" 2>&1; then
        passed=$((passed + 1))
        echo "loop $i/$n: passed ($(( $(date +%s) - start )) s)"
        rm -f "$logs/loop-$i.log"
    else
        echo "loop $i/$n: FAILED ($(( $(date +%s) - start )) s): $logs/loop-$i.log"
        grep -E "^(FAILED|ERROR)" "$logs/loop-$i.log" | sed 's/^/    /'
    fi
done
echo "$passed/$n passed"
[ "$passed" -eq "$n" ]
