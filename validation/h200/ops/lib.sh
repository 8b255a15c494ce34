# Sourced by the run*.sh of this folder and of ../capwarmup (one device call
# each): heldout3/lib.sh's prelude (out, here, root, w, cap, pack; everything
# printed goes to OUTDIR/LOGNAME too), then
#   capops "NAME:REPS ..."   each operator of workloads.py captured alone,
#                            two traced steps, into $w as op_NAME.*
#   capx TAG REPS NAME [key=value...]
#                            one operator with shape options, as capops,
#                            into $w as op_TAG.*
#   controls CMD...          the streaming control `add` captured before and
#                            (as op_add_end) after running CMD
#   ncuops "NAME ..." BUDGET Nsight Compute on one repetition of each, reduced
#                            into $w as ncu_op_NAME.subset.csv.gz (log: ncu.log);
#                            an entry TAG=NAME,key=value,... runs NAME with
#                            those shape options, as ncu_op_TAG
#   ncu_op_spec TAG NAME[,key=value...]
#                            the run_h200_ncu.sh argument for one repetition
#                            of operator NAME with those options, as op_TAG
#   source lib.sh OUTDIR LOGNAME
source "$(dirname "${BASH_SOURCE[0]}")/../heldout3/lib.sh" "$1" "$2"
ops_py="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/workloads.py"
capx() {
  local tag=$1 reps=$2 name=$3 a args=()
  shift 3
  for a in "$@"; do args+=(--arg "$a"); done
  timeout 60 python3 "$root/traces/capture/capture.py" --workload "$ops_py:op" --arg name="$name" \
    --arg reps="$reps" "${args[@]}" --out "$w" --tag "op_$tag" --class operator --profile-steps 2
  echo "op_$tag rc=$?"
}
capops() {
  local o
  for o in $1; do capx "${o%%:*}" "${o#*:}" "${o%%:*}"; done
}
controls() {
  capops "add:60"
  "$@"
  capx add_end 60 add
}
ncu_op_spec() {
  echo "op_$1=$ops_py:op,name=$2,reps=1"
}
ncuops() {
  local n ncus=()
  for n in $1; do
    if [[ $n == *=* ]]; then
      ncus+=("$(ncu_op_spec "${n%%=*}" "${n#*=}")")
    else
      ncus+=("$(ncu_op_spec "$n" "$n")")
    fi
  done
  mkdir -p "$w/ncu_raw"
  OUT="$w/ncu_raw" BUDGET="$2" LIMIT=40 bash "$root/traces/capture/run_h200_ncu.sh" "${ncus[@]}"
  ncu_reduce "$w"  # heldout3/lib.sh; the log goes into the archive, as before
}
