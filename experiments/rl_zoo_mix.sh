#!/usr/bin/env bash
# Training at scale (issue #34 item 4): one any-device Placeto policy trained on a family's
# train graphs together with imported real models (experiments/zoo), with
# experiments/configs/reinforce_any.yaml (or CONFIG) and env.start=placer:best, as the shipped
# policies.  A model above policy.coarse_above ops (1024) trains on its coarse graph with
# rewards from the whole graph (actors/environment.h FineView); the others are placed whole.
#
# Usage: experiments/rl_zoo_mix.sh FAMILY SEED [models (default "gpt12 inception_v3")]
#   The family is rl_no_teacher.sh's (generator seed 20 + SEED, 8 train graphs); the models
#   must be imported (experiments/zoo/import_zoo.sh).  OVERRIDES="key=value ..." are passed on
#   (e.g. iterations=100); PLACETO_BIN=dir selects the executables.
# Writes runs/data/zoo-mix-<family>-<seed>/ (the train graphs and the models, as one graph
# directory: every graph is both trained on and evaluated) and runs/rl/zoo-mix-<family>/s<seed>/.
set -euo pipefail
cd "$(dirname "$0")/.."
source launch/env.sh
source experiments/study.sh
family=${1:?usage: experiments/rl_zoo_mix.sh FAMILY SEED [models]}
seed=${2:?usage: experiments/rl_zoo_mix.sh FAMILY SEED [models]}
models=(${3:-gpt12 inception_v3})
bin=${PLACETO_BIN:-build/bin}
config=${CONFIG:-experiments/configs/reinforce_any.yaml}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
family_spec "$family"
fam=runs/data/rl-$family-$((20 + seed))
[[ -f $fam/manifest.json ]] ||
  $bin/placeto generate --family "$family" --count 12 --test 4 --seed $((20 + seed)) \
    "${spec[@]}" --out "$fam" > /dev/null
mix=runs/data/zoo-mix-$family-$seed
rm -rf "$mix"
mkdir -p "$mix"
/usr/bin/python3 - "$fam" "$mix" <<'PY'
import json, shutil, sys
fam, mix = sys.argv[1:]
for g in json.load(open(fam + "/manifest.json"))["train"]:
    shutil.copy("%s/%s" % (fam, g), mix)
PY
for m in "${models[@]}"; do
  [[ -f runs/zoo/$m.json ]] || { echo "rl_zoo_mix.sh: runs/zoo/$m.json is missing (experiments/zoo/import_zoo.sh $m)" >&2; exit 2; }
  cp "runs/zoo/$m.json" "$mix/zoo_$m.json"
done
run=runs/rl/zoo-mix-$family/s$seed
mkdir -p "$(dirname "$run")"
$bin/placeto train --config "$config" --run-dir "$run" --resume auto "family_dir=$mix" \
  "seed=$seed" env.start=placer:best ${OVERRIDES:-} 2>&1 | tee "$run.train.log" | grep -v '^train ' || true
echo "run: $run (graphs: $mix)"
