#!/usr/bin/env bash
# The after-effect experiment of docs/validation.md ("Timing traces"): one
# process per workload and setting, aftereffect.py. One device call, ~5 min:
#   bash validation/h200/timing/run_after.sh OUTDIR
set -u
export PYTHONUNBUFFERED=1
out="${1:?usage: run_after.sh OUTDIR}"
mkdir -p "$out"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
h1="$root/validation/h200/heldout/workloads.py"
h2="$root/validation/h200/heldout2/workloads.py"
exec > >(tee -a "$out/run.log") 2>&1
tl=$(python3 -c "import os, torch; print(os.path.join(os.path.dirname(torch.__file__), 'lib'))")
for so in libtorch_cuda.so libtorch_cpu.so; do
  echo "$so: $(timeout 10 grep -a -o 'TEARDOWN_CUPTI' "$tl/$so" | head -1)"
done
lscpu | grep -E "Model name|^CPU\(s\)|MHz|Thread" ; uptime
for spec in "smallbatch_train" "$h2:unet_train"; do
  timeout 60 python3 "$here/aftereffect.py" --control $spec
done
for setting in default 1; do
  for spec in "smallbatch_train" "gpt3_train preset=medium" "$h2:unet_train" "$h2:resnet18_train" \
              "$h1:mlp_train"; do
    if [ "$setting" = default ]; then
      timeout 60 python3 "$here/aftereffect.py" $spec
    else
      TEARDOWN_CUPTI=$setting timeout 60 python3 "$here/aftereffect.py" $spec
    fi
  done
done
uptime
