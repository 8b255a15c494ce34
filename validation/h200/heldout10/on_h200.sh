# Sourced first by ../heldout11/run.sh and ../heldout12/run.sh with their
# arguments: on an H200 it runs run.sh here (its H200 branch) in their place.
if [[ $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) == *H200* ]]; then
  exec bash "$(dirname "${BASH_SOURCE[0]}")/run.sh" "$@"
fi
