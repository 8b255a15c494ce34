# Sourced by the run*.sh of this folder (one device call each):
#   source lib.sh OUTDIR LOGNAME
# sets out (OUTDIR), here, root, w (a scratch folder for the captures), sends
# everything printed to OUTDIR/LOGNAME too, and defines capw, cap and pack.
set -u
export PYTHONUNBUFFERED=1
out="${1:?usage: run*.sh OUTDIR}"
mkdir -p "$out"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
w=$(mktemp -d)
exec > >(tee -a "$out/$2") 2>&1

# capw TAG CLASS LIMIT_S FILE.py:BUILDER [capture.py options...]: three
# traced steps of a workload of any file.
capw() {
  local tag=$1 klass=$2 lim=$3 wl=$4
  shift 4
  timeout "$lim" python3 "$root/traces/capture/capture.py" --workload "$wl" \
    --out "$w" --tag "$tag" --class "$klass" --profile-steps 3 "$@"
  echo "$tag rc=$?"
}

# board: the lent GPU's name, UUID, serial, bus, VBIOS, power and limit,
# temperature (which board each capture ran on), and T0 for the elapsed
# times the scripts print.
board() {
  T0=$SECONDS
  nvidia-smi --query-gpu=name,uuid,serial,pci.bus_id,vbios_version,power.draw,power.limit,temperature.gpu --format=csv
}

# cap TAG CLASS LIMIT_S BUILDER [capture.py options...]: capw with a builder
# of the calling script's folder's workloads.py.
cap() {
  local tag=$1 klass=$2 lim=$3 wl=$4
  shift 4
  capw "$tag" "$klass" "$lim" "$here/workloads.py:$wl" "$@"
}

# pack NAME: the captures' samples gzipped, everything in OUTDIR/NAME.tar.gz.
pack() {
  for f in "$w"/*.nvml_samples.csv; do [ -f "$f" ] && gzip -9 "$f"; done
  tar -C "$w" -czf "$out/$1.tar.gz" .
  ls -la "$w" "$out"
}

# ncu_run LIMIT REGEX TAG=WORKLOAD: Nsight Compute (--clock-control none, one
# step after three warm-up steps, L2 flushed per kernel) on the kernels of one
# step whose names match REGEX ('' for every kernel), through
# traces/capture/run_h200_ncu.sh, which applies one filter to all the
# workloads of a call: hence one call per workload. Raw CSVs go to $w/ncu_raw.
# REGEX is matched against the function's base name (ATen's pointwise kernels
# are all `vectorized_elementwise_kernel`) unless NCU_NAME_BASE=demangled is
# set, which matches the whole demangled name with its functor.
ncu_run() {
  local lim=$1 re=$2
  shift 2
  mkdir -p "$w/ncu_raw"
  OUT="$w/ncu_raw" BUDGET=$((lim + 5)) LIMIT="$lim" \
    NCU_EXTRA="${NCU_NAME_BASE:+--kernel-name-base $NCU_NAME_BASE }${re:+-k regex:$re}" \
    bash "$root/traces/capture/run_h200_ncu.sh" "$@"
}

# ncu_reduce [LOGDIR]: every raw CSV of ncu_run reduced (ncu_reduce.py) to
# $w/ncu_<tag>.subset.csv.gz, their log copied to LOGDIR/ncu.log (default
# OUTDIR), the raw ones removed.
ncu_reduce() {
  local f
  for f in "$w"/ncu_raw/ncu_*.csv; do
    [ -f "$f" ] && python3 "$root/traces/capture/ncu_reduce.py" "$f" "$w/$(basename "${f%.csv}").subset.csv.gz"
  done
  [ -f "$w/ncu_raw/run.log" ] && cp "$w/ncu_raw/run.log" "${1:-$out}/ncu.log"
  rm -rf "$w/ncu_raw"
}
