#!/usr/bin/env bash
# Regenerates the paper figures: runs every experiment of experiments/ with
# `dvfsim sweep`, then executes every notebook of notebooks/ (docs/experiments.md),
# then checks the PDFs' fonts (scripts/check_figures.sh: no Type 3).
# This is the only way the committed figures of notebooks/figures/ are
# written: a notebook run by hand writes to results/figures/.
#
#   scripts/figures.sh [--small] [--headline] [--only E1,E2] [--jobs N] [--dvfsim PATH]
#
#   --small      the CI-sized experiments of experiments/small/ (a few minutes on
#                2 cores); results in results/small/, figures in
#                notebooks/figures/small/
#   --headline   only the headline figures: switch latency (03) and Table 2 (01)
#   --only LIST  only these experiments (comma-separated names of experiments/),
#                and the notebooks they feed; a notebook that draws several
#                experiments needs the others' results in the results directory
#   --jobs N     parallel runs per sweep (default: all cores)
#   --dvfsim P   the dvfsim program (default: $DVFSIM, build/apps/dvfsim,
#                build*/apps/dvfsim, or dvfsim on PATH)
#
# Environment: DVFSIM_RESULTS_DIR and DVFSIM_FIGURES_DIR override the result
# and figure directories; PYTHON the Python that has pandas, matplotlib,
# nbconvert and ipykernel (default /usr/bin/python3 when it has them).
# Sweeps are resumable: a second call reruns nothing that is complete.
# Exit status: 0 all good, 1 a run, a notebook or the font check failed, 2 bad usage/setup.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
small=0
headline=0
only=""
jobs=""
dvfsim="${DVFSIM:-}"

usage() { sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --small) small=1 ;;
    --headline) headline=1 ;;
    --only) only="${2:?--only needs experiment names}"; shift ;;
    --only=*) only="${1#--only=}" ;;
    --jobs) jobs="${2:?--jobs needs a number}"; shift ;;
    --jobs=*) jobs="${1#--jobs=}" ;;
    --dvfsim) dvfsim="${2:?--dvfsim needs a path}"; shift ;;
    --dvfsim=*) dvfsim="${1#--dvfsim=}" ;;
    -h|--help) usage; exit 0 ;;
    *) echo "figures.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

# The dvfsim program.
if [[ -z "$dvfsim" ]]; then
  if [[ -x "$ROOT/build/apps/dvfsim" ]]; then
    dvfsim="$ROOT/build/apps/dvfsim"
  else
    # the most recently built one of build*/
    dvfsim=$(ls -t "$ROOT"/build*/apps/dvfsim 2>/dev/null | head -n 1 || true)
    [[ -z "$dvfsim" ]] && dvfsim=$(command -v dvfsim || true)
  fi
fi
if [[ -z "$dvfsim" || ! -x "$dvfsim" ]]; then
  echo "figures.sh: no dvfsim program found; build it (cmake -S . -B build && make -C build dvfsim)" \
       "or pass --dvfsim PATH" >&2
  exit 2
fi

# A Python with the notebook stack.
check_py() { "$1" -c 'import pandas, matplotlib, nbconvert, ipykernel' >/dev/null 2>&1; }
py="${PYTHON:-}"
if [[ -z "$py" ]]; then
  for candidate in /usr/bin/python3 python3; do
    if command -v "$candidate" >/dev/null && check_py "$candidate"; then py="$candidate"; break; fi
  done
fi
if [[ -z "$py" ]] || ! check_py "$py"; then
  echo "figures.sh: need a Python with pandas, matplotlib, nbconvert and ipykernel; on Debian/Ubuntu:" >&2
  echo "  sudo apt-get install python3-pandas python3-matplotlib python3-nbconvert python3-ipykernel" >&2
  exit 2
fi

if [[ $small -eq 1 ]]; then
  exp_dir="$ROOT/experiments/small"
  results="${DVFSIM_RESULTS_DIR:-$ROOT/results/small}"
  figures="${DVFSIM_FIGURES_DIR:-$ROOT/notebooks/figures/small}"
else
  exp_dir="$ROOT/experiments"
  results="${DVFSIM_RESULTS_DIR:-$ROOT/results}"
  figures="${DVFSIM_FIGURES_DIR:-$ROOT/notebooks/figures}"
fi
mkdir -p "$results" "$figures"
results=$(cd "$results" && pwd)
figures=$(cd "$figures" && pwd)

# experiment -> notebook
experiments=(table2_3080ti per_kernel_clocks_3080ti switch_latency pareto_3080ti validation_h200
             kerneltuner_a100pcie40 kerneltuner_rtxa4000
             power_limit_a100-pcie power_limit_a100-sxm power_limit_h100-sxm power_limit_h200
             seed_spread step_policies static_cloud_rtx3080ti static_cloud_a100-sxm static_cloud_h200
             pipeline_gpt3xl)
declare -A notebook=(
  [table2_3080ti]=01-table2
  [per_kernel_clocks_3080ti]=02-per-kernel-clocks
  [switch_latency]=03-switch-latency
  [pareto_3080ti]=04-pareto
  [validation_h200]=05-validation
  [kerneltuner_a100pcie40]=06-frequency-response
  [kerneltuner_rtxa4000]=06-frequency-response
  [power_limit_a100-pcie]=07-power-limit
  [power_limit_a100-sxm]=07-power-limit
  [power_limit_h100-sxm]=07-power-limit
  [power_limit_h200]=07-power-limit
  [seed_spread]=08-seed-spread
  [step_policies]="09-step-timeline 10-energy-breakdown 12-switches"
  [static_cloud_rtx3080ti]=11-pareto-front
  [static_cloud_a100-sxm]=11-pareto-front
  [static_cloud_h200]=11-pareto-front
  [pipeline_gpt3xl]=13-pipeline
)
# experiments whose notebooks read timeline.csv (written only with --full-outputs)
declare -A full_outputs=([step_policies]=1)
[[ $headline -eq 1 ]] && experiments=(switch_latency table2_3080ti)
if [[ -n "$only" ]]; then
  IFS=, read -r -a experiments <<<"$only"
  for e in "${experiments[@]}"; do
    [[ -n "${notebook[$e]:-}" ]] || { echo "figures.sh: --only: unknown experiment '$e'" >&2; exit 2; }
  done
fi

status=0
t_start=$SECONDS
echo "figures.sh: dvfsim $dvfsim; experiments $exp_dir; results $results; figures $figures"
for e in "${experiments[@]}"; do
  t0=$SECONDS
  rc=0
  "$dvfsim" sweep "$exp_dir/$e.yaml" --out "$results/$e" ${jobs:+--jobs "$jobs"} \
    ${full_outputs[$e]:+--full-outputs} || rc=$?
  if [[ $rc -eq 1 ]]; then
    echo "figures.sh: $e: some runs failed (see the error column of $results/$e/results.csv)" >&2
    status=1
  elif [[ $rc -ne 0 ]]; then
    echo "figures.sh: $e: the sweep could not run (exit $rc)" >&2
    exit 2
  fi
  echo "figures.sh: sweep $e done in $((SECONDS - t0)) s"
done

export DVFSIM_RESULTS_DIR="$results" DVFSIM_FIGURES_DIR="$figures" DVFSIM_SOURCE_DIR="$ROOT"
export PYDEVD_DISABLE_FILE_VALIDATION=1
declare -A executed=()
for e in "${experiments[@]}"; do
 for nb in ${notebook[$e]}; do  # an experiment may feed several notebooks
  [[ -n "${executed[$nb]:-}" ]] && continue  # one notebook may draw several experiments
  executed[$nb]=1
  t0=$SECONDS
  if "$py" -m nbconvert --to notebook --execute --ExecutePreprocessor.timeout=600 \
       --ExecutePreprocessor.kernel_name=python3 --output-dir "$results/notebooks" \
       "$ROOT/notebooks/$nb.ipynb" >"$results/notebooks.$nb.log" 2>&1; then
    echo "figures.sh: notebook $nb done in $((SECONDS - t0)) s -> $figures/$nb.png"
  else
    echo "figures.sh: notebook $nb failed; its log:" >&2
    tail -n 30 "$results/notebooks.$nb.log" >&2
    status=1
  fi
 done
done
# The venue's PDF check: no Type 3 fonts, everything embedded.
bash "$ROOT/scripts/check_figures.sh" "$figures" || status=1
echo "figures.sh: finished in $((SECONDS - t_start)) s (executed notebooks in $results/notebooks/)"
exit $status
