# Sourced by the run*.sh of this folder (one device call each):
#   source lib.sh OUTDIR LOGNAME
# sets out (OUTDIR), here, root, w (a scratch folder for the captures), sends
# everything printed to OUTDIR/LOGNAME too, and defines cap and pack.
set -u
export PYTHONUNBUFFERED=1
out="${1:?usage: run*.sh OUTDIR}"
mkdir -p "$out"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
w=$(mktemp -d)
exec > >(tee -a "$out/$2") 2>&1

# cap TAG CLASS LIMIT_S BUILDER [capture.py options...]: three traced steps.
cap() {
  local tag=$1 klass=$2 lim=$3 wl=$4
  shift 4
  timeout "$lim" python3 "$root/traces/capture/capture.py" --workload "$here/workloads.py:$wl" \
    --out "$w" --tag "$tag" --class "$klass" --profile-steps 3 "$@"
  echo "$tag rc=$?"
}

# pack NAME: the captures' samples gzipped, everything in OUTDIR/NAME.tar.gz.
pack() {
  for f in "$w"/*.nvml_samples.csv; do [ -f "$f" ] && gzip -9 "$f"; done
  tar -C "$w" -czf "$out/$1.tar.gz" .
  ls -la "$w" "$out"
}
