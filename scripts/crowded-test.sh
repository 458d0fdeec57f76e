#!/usr/bin/env bash
# Runs the test command N times in a row (default 5) on a machine crowded
# the way issue 11 asks: a second copy of the whole suite looping in a
# clone, `stress-ng --cpu 4 --hdd 2`, and a full rebuild looping in another
# clone. Needs stress-ng (Debian: apt-get install stress-ng). Every run's
# log is kept in OUT (default /tmp/wfd-crowded), the measured runs as
# runN.log and the second copy's as copyN.log; OUT/runs lists how each
# ended. Not part of CI: it takes about ten minutes a run.
set -u
cd "$(dirname "$0")/.."
runs=${1:-5}
out=${OUT:-/tmp/wfd-crowded}
rm -rf "$out" && mkdir -p "$out"
work=$(mktemp -d)
git clone -q . "$work/measure" && git clone -q . "$work/copy" && git clone -q . "$work/build"

# Each load runs in a process group of its own, so cleanup ends it whole.
pids=()
setsid stress-ng --cpu 4 --hdd 2 --temp-path "$work" --timeout 4h >"$out/stress.log" 2>&1 &
pids+=($!)
setsid bash -c 'cd "$1/copy" && i=0 && while true; do
  i=$((i + 1))
  scripts/test.sh >"$2/copy$i.log" 2>&1
  echo "copy $i exit $? $(date +%T)" >>"$2/runs"
done' _ "$work" "$out" &
pids+=($!)
setsid bash -c 'cd "$1/build" && while true; do go build -a -o /dev/null ./... >/dev/null 2>&1; done' _ "$work" &
pids+=($!)
cleanup() {
  # SIGKILL: stress-ng's workers outlive a SIGTERM to their group.
  for p in "${pids[@]}"; do kill -KILL -- "-$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT

passed=0
for i in $(seq "$runs"); do
  start=$(date +%s)
  (cd "$work/measure" && scripts/test.sh >"$out/run$i.log" 2>&1)
  rc=$?
  [ $rc -eq 0 ] && passed=$((passed + 1))
  echo "run $i exit $rc $(($(date +%s) - start))s load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/runs"
done
echo "crowded: $passed passed, $((runs - passed)) failed"
[ "$passed" -eq "$runs" ]
