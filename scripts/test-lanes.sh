#!/usr/bin/env bash
# Runs the members' test suites in lanes side by side: each lane runs its
# members one after another, every lane at once. On 2 cores this pays because
# the longest suites spend most of their time waiting on the processes they
# start. Each lane's output is printed whole once it and the lanes before it
# have ended (never interleaved), with one line per suite as it ends; the
# exit status is 1 if any suite failed, after every lane has run all its suites.
#
#   scripts/test-lanes.sh "member member ..." "member ..." ...
#
# LGOS_TEST_LANES=1 runs every lane's members in one lane, in order.
set -uo pipefail

uv=${UV:-uv}
lanes=("$@")
if [[ ${LGOS_TEST_LANES:-} == 1 ]]; then
    lanes=("${lanes[*]}")
fi
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

run_lane() {
    local index=$1 failed=0 member start rc
    shift
    for member in $1; do
        start=$SECONDS
        {
            echo "== tests: $member"
            "$uv" run --frozen pytest "$member/tests" -q
        } >> "$logs/lane-$index.log" 2>&1
        rc=$?
        echo "-- lane $index: $member $([[ $rc == 0 ]] && echo passed || echo FAILED) in $((SECONDS - start)) s"
        [[ $rc == 0 ]] || failed=1
    done
    return $failed
}

pids=()
for index in "${!lanes[@]}"; do
    run_lane "$((index + 1))" "${lanes[$index]}" &
    pids+=($!)
done
status=0
for index in "${!pids[@]}"; do
    wait "${pids[$index]}" || status=1
    cat "$logs/lane-$((index + 1)).log"
done
exit $status
