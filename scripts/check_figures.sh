#!/usr/bin/env bash
# Checks figure PDFs the way a venue's submission system does: every font is
# embedded and none is a Type 3 (bitmap-like) font. pdffonts is poppler-utils.
#
#   scripts/check_figures.sh [DIR_OR_PDF ...]   (default: notebooks/figures)
#
# Exit status: 0 all good, 1 a PDF fails (each named with its bad fonts),
# 2 no pdffonts or no PDF found.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v pdffonts >/dev/null; then
  echo "check_figures.sh: pdffonts not found; install poppler-utils (scripts/setup.sh)" >&2
  exit 2
fi
[[ $# -eq 0 ]] && set -- notebooks/figures
pdfs=()
for a in "$@"; do
  if [[ -d "$a" ]]; then
    while IFS= read -r -d '' f; do pdfs+=("$f"); done < <(find "$a" -maxdepth 1 -name '*.pdf' -print0 | sort -z)
  elif [[ -f "$a" ]]; then
    pdfs+=("$a")
  else
    echo "check_figures.sh: $a: no such file or directory" >&2
    exit 2
  fi
done
if ((${#pdfs[@]} == 0)); then
  echo "check_figures.sh: no PDF in $*" >&2
  exit 2
fi
bad=0
for f in "${pdfs[@]}"; do
  # pdffonts: two header lines, then name type encoding emb sub uni object ID
  if ! out=$(pdffonts "$f" 2>&1); then
    echo "check_figures.sh: $f: pdffonts failed: $out" >&2
    bad=1
    continue
  fi
  type3=$(tail -n +3 <<<"$out" | grep -E 'Type 3' || true)
  unembedded=$(tail -n +3 <<<"$out" | awk '{ if ($(NF-4) == "no") print }' || true)
  if [[ -n "$type3" || -n "$unembedded" ]]; then
    echo "check_figures.sh: $f: Type 3 or unembedded fonts (set pdf.fonttype 42; notebooks/dvfsim_plots.py):" >&2
    printf '%s\n' "$type3" "$unembedded" | sed '/^$/d; s/^/  /' >&2
    bad=1
  fi
done
if ((bad == 0)); then
  echo "check_figures.sh: ${#pdfs[@]} PDF(s), TrueType/Type 1 fonts only, all embedded"
fi
exit $bad
