#!/usr/bin/env bash
# The scale benchmark (issue #34 item 5; docs/PERFORMANCE.md "Placement at scale"): placement
# time, step time and peak memory against the op count, for every method, on generated ptb
# graphs of about 1k, 5k, 20k and 50k ops (generator seed 34) and on the imported decoders
# that exist under runs/zoo (gpt12, gpt48 and the deep, narrow gpt180w128 and gpt450w128 of
# experiments/zoo/import_zoo.sh).  Each graph on D k80 devices, uncapped.
#
# Usage: experiments/graph_scale.sh
#   OUT=runs/graph_scale  DEVICES=4  SEED=1  SIZES="1k 5k 20k 50k" (SIZES= for none)
#   ZOO="gpt12 gpt48 gpt180w128 gpt450w128" (those imported)
#   POLICY=models/placeto_rl_ptb.h5 (the Placeto checkpoint), SCORER=models/nmt.h5 (the move
#   scorer of policy-search and auto)
#   METHODS: the fast placers, best, policy, then the searches anneal, policy-search and
#   auto, each given T ms: 1000 below 2k ops, 1 ms per op up to 40k ops, 60000 above.
#   METHODS="best policy" measures only these (default: all of the above; the table needs best).
#   PLACETO_BIN=dir selects the executables (default build/bin).
# Writes OUT/results.tsv (graph, ops, method, time_ms, place_ms, wall_s, rss_mb, step_us,
# feasible) and, by summarize_graph_scale.py, OUT/summary.md and OUT/scale.png.  Rows already
# measured are kept (delete results.tsv to measure again).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source launch/env.sh
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
bin=${PLACETO_BIN:-build/bin}
out=${OUT:-runs/graph_scale}
devices=${DEVICES:-4}
seed=${SEED:-1}
policy=${POLICY:-models/placeto_rl_ptb.h5}
scorer=${SCORER:-models/nmt.h5}
sizes=(${SIZES-1k 5k 20k 50k})
zoo=(${ZOO-gpt12 gpt48 gpt180w128 gpt450w128})
fast=(single metis heft m-etf m-sct m-topo partition best)
mkdir -p "$out/graphs" "$out/placements"
tsv=$out/results.tsv
[[ -f $tsv ]] || printf "graph\tops\tmethod\ttime_ms\tplace_ms\twall_s\trss_mb\tstep_us\tfeasible\n" > "$tsv"

# name -> (steps cell-nodes layers) of the generated ptb graphs.
declare -A spec=([1k]="12 16 2" [5k]="16 24 5" [20k]="64 32 5" [50k]="128 32 6")
graphs=()
for s in "${sizes[@]}"; do
  [[ -v spec[$s] ]] || { echo "graph_scale.sh: unknown size $s (${!spec[*]})" >&2; exit 2; }
  read -r steps cells layers <<< "${spec[$s]}"
  dir=$out/graphs/ptb_$s
  [[ -f $dir/ptb_0.json ]] || $bin/placeto generate --family ptb --count 1 --test 0 --seed 34 \
    --steps "$steps" --cell-nodes "$cells" --layers "$layers" --out "$dir" > /dev/null
  graphs+=("ptb_$s=$dir/ptb_0.json")
done
for m in "${zoo[@]}"; do
  [[ -f runs/zoo/$m.json ]] && graphs+=("$m=runs/zoo/$m.json")
done

ops_of() { /usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["nodes"]))' "$1"; }

# run GRAPH_NAME FILE OPS METHOD T [extra args...]
run() {
  local name=$1 file=$2 ops=$3 method=$4 t=$5
  shift 5
  [[ -z ${METHODS:-} || " $METHODS " == *" $method "* ]] || return 0
  local label=$method
  grep -q "^$name"$'	'"[0-9]*"$'	'"$label"$'	' "$tsv" && return 0
  local json=$out/placements/$name.$label.json log=$out/placements/$name.$label.log
  local time_args=()
  ((t > 0)) && time_args=(--time-ms "$t")
  local t0 t1 rc=0
  t0=$(date +%s.%N)
  /usr/bin/time -f "%M" -o "$log.rss" $bin/placeto place --graph "$file" --devices "$devices" \
    --method "$method" --seed "$seed" "${time_args[@]}" "$@" --out "$json" > "$log" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  if ((rc > 1)); then
    echo "graph_scale.sh: $label on $name failed (exit $rc): $(tail -1 "$log")" >&2
    return 0
  fi
  /usr/bin/python3 - "$log" "$log.rss" "$name" "$ops" "$label" "$t" "$t0" "$t1" >> "$tsv" <<'PY'
import json, sys
log, rss, name, ops, label, t, t0, t1 = sys.argv[1:]
d = json.loads(open(log).read().splitlines()[0])
kb = int(open(rss).read().split()[-1])
print("\t".join([name, ops, label, t, "%.1f" % d["place_ms"], "%.2f" % (float(t1) - float(t0)),
                 "%.0f" % (kb / 1024), "%.1f" % d["runtime_us"], str(d["feasible"]).lower()]))
PY
  echo "$name ($ops ops) $label: $(tail -1 "$tsv" | cut -f5-9)"
}

for entry in "${graphs[@]}"; do
  name=${entry%%=*} file=${entry#*=}
  ops=$(ops_of "$file")
  if ((ops < 2000)); then t=1000; elif ((ops <= 40000)); then t=$ops; else t=60000; fi
  for m in "${fast[@]}"; do run "$name" "$file" "$ops" "$m" 0; done
  run "$name" "$file" "$ops" policy 0 --checkpoint "$policy"
  run "$name" "$file" "$ops" anneal "$t"
  run "$name" "$file" "$ops" policy-search "$t" --checkpoint "$scorer"
  run "$name" "$file" "$ops" auto "$t" --checkpoint "$scorer"
done
/usr/bin/python3 experiments/summarize_graph_scale.py "$tsv" "$out/summary.md" "$out/scale.png"
echo "summary: $out/summary.md, plot: $out/scale.png"
