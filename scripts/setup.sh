#!/usr/bin/env bash
# Installs the Debian packages dvfsim needs, when they are missing. Run as root
# (or with sudo available). Does nothing when everything is installed.
set -euo pipefail
packages=(
  build-essential cmake pkg-config git
  libyaml-cpp-dev libfmt-dev libeigen3-dev libboost-graph-dev libsimdjson-dev libcli11-dev
  zlib1g-dev libsqlite3-dev libgtest-dev libgmock-dev libbenchmark-dev clang-format
  clang libclang-rt-14-dev
  python3-pandas python3-matplotlib python3-pil python3-seaborn python3-nbformat python3-ipykernel python3-yaml
  jupyter-nbconvert pybind11-dev python3-pytest poppler-utils
)
# slurm-wlm and munge are not listed: only tests/slurm/run.sh needs them, and
# it installs them (apt-get) when it runs.
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi
echo "setup: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
