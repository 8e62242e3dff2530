#!/usr/bin/env bash
# The linalg held-out evaluation of RESULTS.md section 14, now experiments/heldout_eval.sh
# with FAMILY=linalg (its default) and MODELS=nmt by default: the same arguments, environment
# and outputs (the base CSV's auto runs without a model, --checkpoint none, as it did before
# the default model existed).
#   experiments/linalg_eval.sh GRAPH_SEED [OUT (default runs/linalg_eval/g<GRAPH_SEED>)]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[[ $# -ge 1 ]] || { echo "usage: $0 GRAPH_SEED [OUT]" >&2; exit 2; }
MODELS=${MODELS:-nmt} FAMILY=linalg exec "$root/experiments/heldout_eval.sh" "$1" \
  "${2:-runs/linalg_eval/g$1}"
