#!/usr/bin/env bash
# A real Slurm cluster on localhost runs a small experiment as a job array
# (issue 18, docs/experiments.md "Slurm"). Usage:
#   tests/slurm/run.sh [PATH/TO/dvfsim]        (default: build/apps/dvfsim)
#
# Installs Debian's slurm-wlm and munge when missing (apt-get), starts
# munged, slurmctld and slurmd with a minimal configuration (no cgroups;
# tests/slurm/slurm.conf.in) whose every file lives under one temporary
# directory, and checks:
#   1. the experiment run locally, as 3 shards by hand + --merge, and as a
#      3-task Slurm array + its dependent merge job give the same results.csv
#      (timing columns, if any, ignored);
#   2. a killed array task leaves its runs missing (merge names them), and
#      resubmitting runs only those: finished runs are not rerun.
# Stops the daemons it started, by PID, on every exit. Skips (exit 0, a
# skipped count of 1 in the closing line) only when the packages cannot be
# installed. Takes about a minute on 2 cores.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
dvfsim="$(realpath "${1:-$repo/build/apps/dvfsim}")"
limit_s="${SLURM_TEST_TIMEOUT_S:-90}"  # per wait for the queue to drain
passed=0
failed=0
skipped=0

finish() {
  echo "slurm tests: $passed passed, $failed failed, $skipped skipped"
  [ "$failed" -eq 0 ]
  exit $?
}
ok() {
  echo "PASS: $*"
  passed=$((passed + 1))
}
bad() {
  echo "FAIL: $*"
  failed=$((failed + 1))
}

if [ ! -x "$dvfsim" ]; then
  echo "FAIL: $dvfsim is not an executable (build first: scripts/build.sh build)"
  failed=1
  finish
fi

# --- packages ---------------------------------------------------------------
need_install() {
  for b in munged slurmctld slurmd sbatch squeue scontrol; do
    command -v "$b" >/dev/null 2>&1 || [ -x "/usr/sbin/$b" ] || return 0
  done
  return 1
}
if need_install; then
  echo "slurm: installing slurm-wlm and munge (apt-get)"
  sudo=""
  [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && sudo="sudo -n"
  if ! { $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    slurm-wlm munge >/tmp/dvfsim-slurm-apt.$$.log 2>&1 ||
    { $sudo apt-get update >/dev/null 2>&1 &&
      $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        slurm-wlm munge >/tmp/dvfsim-slurm-apt.$$.log 2>&1; }; } || need_install; then
    echo "SKIP: slurm-wlm and munge are not installed and cannot be installed" \
      "(apt-get failed: see /tmp/dvfsim-slurm-apt.$$.log); the Slurm test did not run"
    skipped=1
    finish
  fi
fi
export PATH="$PATH:/usr/sbin"

# --- a private cluster ------------------------------------------------------
T="$(mktemp -d /tmp/dvfsim-slurm.XXXXXX)"
chmod 700 "$T"
pids=()
cleanup() {
  # Only what this script started: slurmd, slurmctld, munged, by PID.
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  if [ "$failed" -eq 0 ]; then rm -rf "$T"; else echo "slurm: state and logs kept in $T"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

mkdir -p "$T/munge" "$T/ctld" "$T/slurmd" "$T/bin"
chmod 700 "$T/munge"
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$T/munge/munge.key"
munged --force --key-file="$T/munge/munge.key" --socket="$T/munge/munge.socket" \
  --pid-file="$T/munge/munged.pid" --log-file="$T/munge/munged.log" \
  --seed-file="$T/munge/munged.seed" --foreground >"$T/munge/munged.out" 2>&1 &
pids+=($!)

# Ports from this script's PID, so two copies of the test can run at once.
ctld_port=$((20000 + ($$ % 10000) * 2))
host="$(hostname -s)"
mem_mb=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2))
sed -e "s|@STATE@|$T|g" -e "s|@HOST@|$host|g" -e "s|@NODE@|$host|g" \
  -e "s|@USER@|$(id -un)|g" -e "s|@CTLD_PORT@|$ctld_port|g" \
  -e "s|@SLURMD_PORT@|$((ctld_port + 1))|g" -e "s|@CPUS@|$(nproc)|g" \
  -e "s|@MEM_MB@|$mem_mb|g" "$here/slurm.conf.in" >"$T/slurm.conf"
export SLURM_CONF="$T/slurm.conf"
for _ in $(seq 50); do [ -S "$T/munge/munge.socket" ] && break; sleep 0.1; done
slurmctld -D -i -f "$SLURM_CONF" >"$T/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" >"$T/slurmd.out" 2>&1 &
pids+=($!)
up=0
for _ in $(seq 300); do
  state="$(sinfo -h -N -o %t 2>/dev/null | head -1)"
  case "$state" in idle*) up=1; break ;; esac
  sleep 0.1
done
if [ "$up" -ne 1 ]; then
  bad "the local Slurm cluster did not come up in 30 s (node state '${state:-none}');" \
    "logs: $T/slurmctld.log $T/slurmd.log $T/munge/munged.log"
  finish
fi
echo "slurm: cluster up ($(sinfo -V), node $host, $(nproc) CPUs, state in $T)"

# dvfsim on the compute nodes' PATH, as docs/experiments.md requires. While
# $T/hold exists, the wrapper holds array task 2 so the test can kill it.
cat >"$T/bin/dvfsim" <<EOF
#!/bin/sh
if [ -e "$T/hold" ] && [ "\${SLURM_ARRAY_TASK_ID:-}" = 2 ]; then sleep 300; fi
exec "$dvfsim" "\$@"
EOF
chmod +x "$T/bin/dvfsim"
export PATH="$T/bin:$PATH"

# The tiny experiment: 1 trace x 1 device x 2 policies x 3 latencies = 6 runs.
cat >"$T/exp.yaml" <<EOF
name: slurm_test
traces: [$repo/traces/data/gpt3xl_h200_train_b4_t2048.kineto.json.gz]
devices: [rtx3080ti]
policies: [pass-level, static-best]
set:
  switch_latency_us: [1, 1000, 100000]
baseline: native
seed: 1
EOF
cd "$T"

# results.csv without timing columns (host wall-clock), for comparing.
strip() {
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) drop[i] = ($i ~ /wall|elapsed|host_s/) }
           { out = ""; for (i = 1; i <= NF; i++) if (!drop[i]) out = out (out == "" ? "" : ",") $i;
             print out }' "$1"
}
same() {  # same A B WHAT
  if [ -f "$1" ] && [ -f "$2" ] && cmp -s <(strip "$1") <(strip "$2"); then
    ok "$3: results.csv equals the local run's ($(($(wc -l <"$2") - 1)) runs)"
  else
    bad "$3: results.csv differs from the local run's ($1 vs $2)"
    diff <(strip "$1" 2>/dev/null) <(strip "$2" 2>/dev/null) | head -5
  fi
}
# Waits until the queue is empty, at most $limit_s seconds.
drain() {
  local t0=$SECONDS
  while [ -n "$(squeue -h -o %i 2>/dev/null)" ]; do
    if [ $((SECONDS - t0)) -ge "$limit_s" ]; then
      bad "$1: the queue did not drain in $limit_s s: $(squeue -h -o '%i %T %r' | tr '\n' ';')"
      return 1
    fi
    sleep 0.5
  done
  echo "slurm: $1: queue drained in $((SECONDS - t0)) s"
}
array_job() { sed -n 's/^dvfsim sweep: submitted array job \([0-9]*\).*/\1/p' "$1"; }

# 1. local, 3 shards by hand, Slurm array.
t0=$SECONDS
dvfsim sweep exp.yaml --out local --jobs 2 --no-progress 2>local.log ||
  bad "local sweep failed: $(tail -2 local.log)"
echo "slurm: local sweep ($(nproc) threads): $((SECONDS - t0)) s"
t0=$SECONDS
for k in 1 2 3; do
  dvfsim sweep exp.yaml --out hand --shard "$k/3" --jobs 1 --no-progress 2>>hand.log ||
    bad "shard $k/3 failed: $(tail -2 hand.log)"
done
dvfsim sweep exp.yaml --out hand --merge 2>>hand.log || bad "merge of the hand shards failed"
echo "slurm: 3 shards by hand + merge: $((SECONDS - t0)) s"
same hand/results.csv local/results.csv "3 shards by hand"

t0=$SECONDS
if dvfsim sweep exp.yaml --out array --slurm --array-size 3 --sbatch-option=--time=5 \
  >submit.log 2>&1; then
  drain "array of 3" && echo "slurm: array of 3 + merge job: $((SECONDS - t0)) s"
  same array/results.csv local/results.csv "Slurm array of 3 tasks"
  n_out=$(ls array/slurm/*.out 2>/dev/null | grep -vc merge)
  [ "$n_out" -ge 3 ] && ok "the array ran as $n_out tasks" ||
    bad "expected 3 array task logs under array/slurm/, found $n_out"
else
  bad "dvfsim sweep --slurm failed: $(tail -3 submit.log)"
fi

# 2. Kill array task 2, resubmit: only its runs run again.
touch hold
if dvfsim sweep exp.yaml --out killed --slurm --array-size 3 >submit1.log 2>&1; then
  array_id="$(array_job submit1.log)"
  t0=$SECONDS
  # Wait for tasks 1 and 3 to finish while task 2 is held, then cancel it.
  until [ "$(squeue -h -j "$array_id" -t all -o '%K %T' 2>/dev/null |
    awk '$1 != 2 && $2 == "COMPLETED"' | wc -l)" -ge 2 ] || [ $((SECONDS - t0)) -ge "$limit_s" ]; do
    sleep 0.5
  done
  scancel "${array_id}_2"
  rm -f hold
  drain "killed array"
  n_missing=$(grep -c '^[^,]*,[^,]*,missing,' killed/results.csv 2>/dev/null)
  if [ "${n_missing:-0}" -eq 2 ] && grep -q '4 complete, 2 missing, 0 failed' killed/slurm/merge-*.out; then
    ok "after task 2 was killed the merge job names its 2 runs missing"
  else
    bad "after task 2 was killed the merge does not name its 2 runs missing ($n_missing rows)"
  fi
  missing_before=$(dvfsim sweep exp.yaml --out killed --dry-run 2>/dev/null | grep -c '^  todo')
  stamp() { for f in killed/runs/*/summary.json; do stat -c '%n %i %Y' "$f"; done | sort; }
  stamp >before.txt
  if dvfsim sweep exp.yaml --out killed --slurm --array-size 3 >submit2.log 2>&1; then
    drain "resubmission"
    same killed/results.csv local/results.csv "killed task 2, resubmitted"
    # Every summary.json that existed before is untouched (inode and mtime).
    if [ -s before.txt ] && [ -z "$(comm -23 before.txt <(stamp))" ] && [ "$missing_before" -gt 0 ]; then
      ok "resubmission ran only the $missing_before missing runs; $(wc -l <before.txt) finished runs not rerun"
    else
      bad "resubmission reran finished runs (or none were missing: $missing_before)"
    fi
    if grep -q 'tasks 2)' submit2.log && grep -qx '#SBATCH --array=2' killed/slurm/sweep.sbatch; then
      ok "the resubmitted array has task 2 only"
    else
      bad "the resubmission did not submit task 2 alone: $(head -2 submit2.log)"
    fi
  else
    bad "resubmission failed: $(tail -3 submit2.log)"
  fi
else
  bad "dvfsim sweep --slurm (for the kill test) failed: $(tail -3 submit1.log)"
fi
finish
