# Helpers of the per-family study drivers (generalization.sh, rl_no_teacher.sh; sourced).
#   family_spec FAMILY     sets the array `spec` to the `placeto generate` options of FAMILY
#                          (ptb, cifar10, nmt); exits 2 naming the script for any other name.
#   summarize_seeds OUT FAMILY SEED... [-- summarize_eval.py options]
#                          summarises OUT/s<seed>/eval_final.csv over the seeds into
#                          OUT/summary.md (+ _ratios.png) and plots the training curves of
#                          OUT/s<seed> into OUT/curves.png (+ curves.md).
family_spec() {
  case $1 in
    ptb) spec=(--steps 4 --layers 2 --cell-nodes 4) ;;
    cifar10) spec=(--layers 1 --cell-nodes 4) ;;
    nmt) spec=(--steps 4 --cell-nodes 4) ;;
    *) echo "$(basename "$0"): unknown family '$1' (ptb, cifar10, nmt)" >&2; exit 2 ;;
  esac
}

summarize_seeds() {
  local out=$1 family=$2 s
  shift 2
  local evals=() curves=()
  while (($#)) && [[ $1 != -- ]]; do
    evals+=("s$1=$out/s$1/eval_final.csv")
    curves+=("$family/s$1=$out/s$1")
    shift
  done
  (($#)) && shift
  /usr/bin/python3 experiments/summarize_eval.py "$@" "$out/summary" "${evals[@]}"
  /usr/bin/python3 experiments/plot_curves.py "$out/curves.png" "${curves[@]}" | tee "$out/curves.md"
}
