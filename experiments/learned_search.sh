#!/usr/bin/env bash
# The learned search against the classical searches at equal time (issue #20): anneal,
# slack-anneal, descent, policy-search and the greedy policy, each given T ms per graph
# (--time-ms), on 4 default-size graphs per family (generator seed GRAPH_SEED, 4242 by
# default; the models trained on seed 11), at 2, 3 and 4 k80 devices, 5 search seeds, with the shipped model
# (models/<family>.h5, training seed 1) and two more training seeds
# (runs/search_<family>_s2, _s3 from experiments/train_search_models.sh).  Then the same
# methods at equal simulations (--budget), the imported real models when
# experiments/import_real_models.sh has run, and a re-simulation of placements by
# `placeto sim`.
#
# Usage: [STEPS="timed sims real greedy resim"] [GRAPH_SEED=4242] [NAME=learned_search]
#        experiments/learned_search.sh [OUT (default runs/$NAME)] [T values (default "10 25 30 100 300")]
#   Writes OUT/*.csv, then experiments/results/$NAME.md and experiments/figures/$NAME.png.
#   The search's settings were tuned on the seed-4242 graphs; the bar of issue #20 is also
#   measured on graphs never looked at before (RESULTS.md section 11; 8 minutes):
#     STEPS="timed greedy resim" GRAPH_SEED=6262 NAME=learned_search_fresh experiments/learned_search.sh "" "25 100"
#   The default run takes about 35 minutes on 2 cores.  Run it alone: the budgets are times,
#   so other work on the machine changes the results.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
name=${NAME:-learned_search}
graph_seed=${GRAPH_SEED:-4242}
out=${1:-runs/$name}
times=(${2:-10 25 30 100 300})
bin=${PLACETO_BIN:-build/bin}  # another build (e.g. a copy) to keep rebuilding while this runs
classical=anneal,slack-anneal,descent
learned=policy-search
steps=${STEPS:-timed sims real greedy resim}
has() { [[ " $steps " == *" $1 "* ]]; }
mkdir -p "$out/sims" "$out/real" "$out/greedy" "$out/resim"
for family in ptb nmt cifar10; do
  [[ -f $out/$family/graphs/manifest.json ]] ||
    $bin/placeto generate --family "$family" --count 4 --seed "$graph_seed" --out "$out/$family/graphs" > /dev/null
done
for family in ptb nmt cifar10; do
  for d in 2 3 4; do
    has timed && for t in "${times[@]}"; do
      for seed in 1 2 3 4 5; do
        $bin/placeto compare --graphs "$out/$family/graphs" --devices "$d" --seed "$seed" \
          --methods $classical,$learned --checkpoint models/$family.h5 --time-ms "$t" \
          --out "$out/$family-d$d-t$t-s$seed-m1.csv" > /dev/null
        for m in 2 3; do
          $bin/placeto compare --graphs "$out/$family/graphs" --devices "$d" --seed "$seed" \
            --methods $learned --checkpoint runs/search_${family}_s$m/checkpoints --time-ms "$t" \
            --out "$out/$family-d$d-t$t-s$seed-m$m.csv" > /dev/null
        done
      done
    done
    # Equal simulations: every search gets B simulations (anneal and descent count only their
    # moves; policy-search counts every candidate it simulates).
    has sims && for b in 300 1000 3000 10000; do
      for seed in 1 2 3; do
        $bin/placeto compare --graphs "$out/$family/graphs" --devices "$d" --seed "$seed" \
          --methods $classical,policy-search --checkpoint models/$family.h5 --budget "$b" \
          --out "$out/sims/$family-d$d-b$b-s$seed.csv" > /dev/null
      done
    done
    echo "$family d=$d done"
  done
done

# Imported real models (k80 profile): convolutional ones with the cifar10 model, sequence
# models with the nmt model; 5 search seeds, and policy-search with all 3 training seeds.
if has real && [[ -d runs/real/k80 ]]; then
  for group in conv seq; do
    model_family=cifar10
    [[ $group == seq ]] && model_family=nmt
    model=models/$model_family.h5
    for d in 2 3 4; do
      for t in 100 300; do
        for seed in 1 2 3 4 5; do
          $bin/placeto compare --graphs runs/real/k80/$group --devices "$d" --seed "$seed" \
            --methods $classical,$learned --checkpoint $model --time-ms "$t" \
            --out "$out/real/$group-d$d-t$t-s$seed.csv" > /dev/null
          # The other two training seeds' models (runs/search_<family>_s2, _s3).
          for m in 2 3; do
            $bin/placeto compare --graphs runs/real/k80/$group --devices "$d" --seed "$seed" \
              --methods $learned --checkpoint runs/search_${model_family}_s$m/checkpoints \
              --time-ms "$t" --out "$out/real/$group-d$d-t$t-s$seed-m$m.csv" > /dev/null
          done
        done
      done
    done
  done
  echo "real models done"
fi

# The greedy learned improvement (`--method scorer-greedy`): no time
# budget, deterministic; run 5 times per graph for its placement time.
has greedy && for family in ptb nmt cifar10; do
  for d in 2 3 4; do
    for m in 1 2 3; do
      model=models/$family.h5
      [[ $m == 1 ]] || model=runs/search_${family}_s$m/checkpoints
      for rep in 1 2 3 4 5; do
        $bin/placeto compare --graphs "$out/$family/graphs" --devices "$d" --seed "$rep" \
          --methods scorer-greedy --checkpoint $model --out "$out/greedy/$family-d$d-m$m-r$rep.csv" > /dev/null
      done
    done
  done
done
if has real && [[ -d runs/real/k80 ]]; then  # the real models' greedy rows belong to the real step
  for group in conv seq; do
    model=models/cifar10.h5
    [[ $group == seq ]] && model=models/nmt.h5
    model_family=cifar10
    [[ $group == seq ]] && model_family=nmt
    for d in 2 3 4; do
      for m in 1 2 3; do
        model=models/$model_family.h5
        [[ $m == 1 ]] || model=runs/search_${model_family}_s$m/checkpoints
        for rep in 1 2 3; do
          $bin/placeto compare --graphs runs/real/k80/$group --devices "$d" --seed "$rep" \
            --methods scorer-greedy --checkpoint $model --out "$out/greedy/real-$group-d$d-m$m-r$rep.csv" > /dev/null
        done
      done
    done
  done
fi

# Every reported runtime is the simulator's: re-simulate policy-search placements with
# `placeto sim` and compare with what `placeto place` reported.
has resim && for family in ptb nmt cifar10; do
  for d in 2 4; do
    g=$out/$family/graphs/${family}_0.json
    $bin/placeto place --graph "$g" --devices $d --method policy-search --checkpoint models/$family.h5 \
      --time-ms 100 --out "$out/resim/$family-d$d.json" > "$out/resim/$family-d$d.place.json"
    $bin/placeto sim --graph "$g" --devices $d --placement "$out/resim/$family-d$d.json" \
      > "$out/resim/$family-d$d.sim.txt"
  done
done
/usr/bin/python3 experiments/summarize_learned_search.py "$out" --md experiments/results/$name.md \
  --png experiments/figures/$name.png
