#!/usr/bin/env bash
# The experiment scripts (experiments/summarize_eval.py, plot_curves.py, plot_trace.py) on the
# hand-written fixtures in tests/data/experiments/: each writes a non-empty PNG, its table holds
# numbers computed here by hand, the same input gives the same bytes, and bad input exits
# non-zero with a message that names the file.
# Usage: scripts_test.sh BIN_DIR SOURCE_DIR   (BIN_DIR is unused: no executables needed)
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "$0")/../lib.sh"
exp=$src/experiments
data=$src/tests/data/experiments
run() {  # name, command...: must exit 0; output in $tmp/out
  local name=$1
  shift
  if "$@" > "$tmp/out" 2>&1; then ok "$name runs"; else bad "$name exit $?:"; cat "$tmp/out"; fi
}
has() {  # name, file, fixed text it must contain
  if grep -qF -- "$3" "$2"; then ok "$1"; else bad "$1: no '$3' in $2:"; cat "$2"; fi
}
png() {  # name, file: exists, non-empty, starts with the PNG signature
  if [[ -s $2 ]] && head -c 4 "$2" | grep -q PNG; then ok "$1 $(wc -c < "$2") bytes"; else
    bad "$1: $2 missing, empty or not a PNG"; fi
}
expect_fail() {  # name, text the message must contain, command...
  local name=$1 text=$2
  shift 2
  "$@" > "$tmp/out" 2>&1
  local rc=$?
  if ((rc != 0)) && grep -qF -- "$text" "$tmp/out" && ! grep -q Traceback "$tmp/out"; then
    ok "$name (exit $rc)"
  else
    bad "$name: exit $rc, expected a message with '$text' and no traceback:"
    cat "$tmp/out"
  fi
}

# --- summarize_eval.py: two seeds of 2 graphs. policy-greedy / best classical (metis):
# s1: 13503.267749/11072.677982 = 1.219512, 13364.524891/12200.699595 = 1.095390,
#     geomean sqrt(1.219512 * 1.095390) = 1.155786;
# s2: 8858.142386/11072.677982 = 0.8, 14640.839514/12200.699595 = 1.2, geomean sqrt(0.96) = 0.979796;
# mean (1.155786 + 0.979796)/2 = 1.067791, sample sd |1.155786 - 0.979796|/sqrt(2) = 0.124444.
# It beats metis on 1 of 4 (seed, graph) pairs; median place_ms of 83.763 69.715 80.125 71.5 is
# 75.8125. policy-best-of-8 is infeasible on ptb_3 in s2.
run summarize "$py" "$exp/summarize_eval.py" "$tmp/sum" "s1=$data/eval_s1.csv" "s2=$data/eval_s2.csv"
has "summarize greedy row" "$tmp/sum.md" "| policy-greedy | 2 | 1.068 ± 0.124 |"
has "summarize greedy place_ms and wins" "$tmp/sum.md" "| 75.812 | 0.25 | 0 |"
has "summarize infeasible counted" "$tmp/sum.md" "| 0.00 | 1 |"
has "summarize classical sd 0" "$tmp/sum.md" "| metis | 2 | 1.000 ± 0.000 |"
if grep -qE '^\| (best-classical|lower-bound) ' "$tmp/sum.md"; then
  bad "summarize: reference rows listed as methods"
else ok "summarize: reference rows left out"; fi
png "summarize ratios png" "$tmp/sum_ratios.png"
"$py" "$exp/summarize_eval.py" "$tmp/again" "s1=$data/eval_s1.csv" "s2=$data/eval_s2.csv" > /dev/null
if cmp -s "$tmp/sum_ratios.png" "$tmp/again_ratios.png"; then ok "summarize deterministic"; else
  bad "summarize: two runs wrote different PNGs"; fi
expect_fail "summarize missing file" "$data/nope.csv" \
  "$py" "$exp/summarize_eval.py" "$tmp/x" "s1=$data/nope.csv"
expect_fail "summarize not an eval report" "run_a1/metrics.csv: missing column(s) graph" \
  "$py" "$exp/summarize_eval.py" "$tmp/x" "s1=$data/run_a1/metrics.csv"

# --- plot_curves.py: a/s1 reaches 1.0 at iteration 20 (4 episodes per iteration: 80), a/s2 at
# iteration 30 (120): group a mean 100, sd sqrt(2 * 20^2) = 28. b never does.
run curves "$py" "$exp/plot_curves.py" "$tmp/curves.png" "a/s1=$data/run_a1" "a/s2=$data/run_a2" \
  "b=$data/run_b"
has "curves a/s1 at 80 episodes" "$tmp/out" "| a/s1 | 80 | 0.950 | 0.950 | 120 |"
has "curves a/s2 at 120 episodes" "$tmp/out" "| a/s2 | 120 |"
has "curves b not reached" "$tmp/out" "| b | not reached |"
has "curves group mean and sd" "$tmp/out" "| a | 2/2 | 100 ± 28 |"
png "curves png" "$tmp/curves.png"
# run_b's metrics.csv has no iteration 20: the evaluation after it takes iteration 19's 152.
run "curves --target" "$py" "$exp/plot_curves.py" "$tmp/c2.png" "b=$data/run_b" --target 1.5
has "curves eval iteration mapped to the episodes before it" "$tmp/out" "| b | 152 |"
mkdir "$tmp/no_eval" && cp "$data/run_a1/metrics.csv" "$tmp/no_eval/"
expect_fail "curves run without eval.csv" "$tmp/no_eval/eval.csv: No such file" \
  "$py" "$exp/plot_curves.py" "$tmp/x.png" "r=$tmp/no_eval"
expect_fail "curves bad argument" "expected LABEL=RUN_DIR" \
  "$py" "$exp/plot_curves.py" "$tmp/x.png" "$data/run_a1"

# --- plot_trace.py: the last event ends at 2000 + 500 us; gpu0 computes 500 + 500 of 2500 us.
run trace "$py" "$exp/plot_trace.py" "$data/trace.json" "$tmp/trace.png"
has "trace runtime" "$tmp/out" "tiny / two: runtime 2.500 ms, 6 events"
has "trace gpu0 compute busy" "$tmp/out" "| gpu0 compute | compute | 3 | 40.0 |"
has "trace bus row kind" "$tmp/out" "| gpu1 outgoing bus | transfer | 1 | 10.0 |"
png "trace png" "$tmp/trace.png"
printf '{"traceEvents": [' > "$tmp/broken.json"
expect_fail "trace not JSON" "$tmp/broken.json: not valid JSON" \
  "$py" "$exp/plot_trace.py" "$tmp/broken.json" "$tmp/x.png"

# --- the driver scripts: valid bash; a missing prerequisite is named and exits non-zero.
for f in "$exp"/*.sh; do
  if bash -n "$f" 2> "$tmp/out"; then ok "syntax $(basename "$f")"; else
    bad "syntax $(basename "$f"):"; cat "$tmp/out"; fi
done
expect_fail "generalization unknown family" "unknown family 'mnist'" \
  bash "$exp/generalization.sh" mnist
expect_fail "rl_no_teacher unknown family" "unknown family 'mnist'" \
  bash "$exp/rl_no_teacher.sh" mnist
mkdir -p "$tmp/nographs"
expect_fail "per_graph directory without graphs" "$tmp/nographs holds no graph files" \
  bash "$exp/per_graph.sh" "$tmp/nographs"
expect_fail "per_graph missing cluster file" "CLUSTER=$tmp/none.yaml: no such file" \
  env CLUSTER="$tmp/none.yaml" bash "$exp/per_graph.sh" "$tmp/nographs"
expect_fail "per_graph family not generated" "run experiments/generalization.sh nosuchfamily first" \
  bash "$exp/per_graph.sh" nosuchfamily
expect_fail "default_model_check missing scorer" "$tmp/none.h5: no such file" \
  bash "$exp/default_model_check.sh" "$tmp/none.h5"

# --- experiments/pool.sh: at most MAX jobs at once, every job run, a failing job fails the driver.
cat > "$tmp/pool_driver.sh" << 'EOF'
set -euo pipefail
source "$1/pool.sh"
job() {  # dir of running jobs, seconds, exit status
  ls "$1" | wc -l >> "$1/../peaks"
  touch "$1/$BASHPID"
  sleep "$2"
  rm "$1/$BASHPID"
  echo done >> "$1/../done"
  return "$3"
}
mkdir -p "$2/running"
for i in 1 2 3 4 5; do pool_add 2 job "$2/running" 0.2 0; done
pool_wait
[[ ${3:-} == fail ]] || exit 0
pool_add 2 job "$2/running" 0.1 3
pool_add 2 job "$2/running" 0.3 0
pool_wait
echo "not reached"
EOF
run "pool of 5 jobs" bash "$tmp/pool_driver.sh" "$exp" "$tmp/pool"
if [[ $(wc -l < "$tmp/pool/done") == 5 ]] && (($(sort -n "$tmp/pool/peaks" | tail -1) <= 1)); then
  ok "pool ran 5 jobs, never more than 2 at once"
else
  bad "pool: $(wc -l < "$tmp/pool/done") jobs done; jobs running at each start: $(tr '\n' ' ' < "$tmp/pool/peaks")"
fi
rm -rf "$tmp/pool"
bash "$tmp/pool_driver.sh" "$exp" "$tmp/pool" fail > "$tmp/out" 2>&1
rc=$?
if ((rc == 3)) && ! grep -q "not reached" "$tmp/out"; then ok "pool: a failing job fails the driver (exit 3)"; else
  bad "pool: a failing job gave exit $rc:"; cat "$tmp/out"; fi

# --- summarize_learned_search.py: one family at 2 devices, two graphs.  At 100 ms descent
# (runtime 80) beats anneal (100), policy-search reaches 72: 72 / 80 = 0.900; at 25 ms 76 / 80
# = 0.950; the greedy policy 0.9 of the best fast placer in 5 and 7 ms: the cell passes.
ls_dir=$tmp/ls
mkdir -p "$ls_dir/greedy"
csv_rows() {  # method runtime ratio ms, for graphs g0 and g1
  for g in g0 g1; do echo "$g,$1,$2,$4,$3"; done
}
for t in 25 100; do
  read -r a ra d rd p rp <<< "100 1.0 80 0.80 72 0.72"
  [[ $t == 25 ]] && read -r a ra d rd p rp <<< "110 1.1 90 0.90 76 0.76"
  {
    echo "graph,method,runtime_us,place_ms,ratio_to_best_classical"
    csv_rows anneal $a $ra $t
    csv_rows slack-anneal $a $ra $t
    csv_rows descent $d $rd $t
    csv_rows policy-search $p $rp $t
    csv_rows best-classical 100 1.0 1
  } > "$ls_dir/ptb-d2-t$t-s1-m1.csv"
done
{
  echo "graph,method,runtime_us,place_ms,ratio_to_best_classical"
  echo "g0,policy,90,5,0.9"
  echo "g1,policy,90,7,0.9"
} > "$ls_dir/greedy/ptb-d2-m1-r1.csv"
run learned_search "$py" "$exp/summarize_learned_search.py" "$ls_dir" --md "$tmp/ls.md" --png "$tmp/ls.png"
has "learned_search: the bar row" "$tmp/ls.md" "| ptb | 2 | descent | 0.900 | 0.950 | 0.900, 6 ms (max 7) | yes |"
has "learned_search: 1 of 1 cells" "$tmp/ls.md" "1 of 1 cells pass."
png "learned_search PNG" "$tmp/ls.png"
expect_fail "learned_search: no CSV files" "no CSV files" \
  "$py" "$exp/summarize_learned_search.py" "$tmp/empty_nothing" --md "$tmp/x.md" --png "$tmp/x.png"

# --- summarize_rl_vs_imitation.py: ptb at 2 devices, one training seed, one search seed.
# Imitation: greedy 0.90, search 0.80; RL: greedy 0.81 (better), search 0.84 (worse):
# the RL/imitation ratios are 0.900 and 1.050.
rv=$tmp/rv
mkdir -p "$rv"
printf 'graph,method,ratio_to_best_classical\ng0,policy,0.9\ng0,policy-search,0.8\n' > "$rv/ptb-d2-m1-s1-imitation.csv"
printf 'graph,method,ratio_to_best_classical\ng0,policy,0.81\ng0,policy-search,0.84\n' > "$rv/ptb-d2-m1-s1-rl.csv"
if "$py" "$exp/summarize_rl_vs_imitation.py" "$rv" 6262 1000 > "$tmp/rv.md" 2> "$tmp/out"; then
  ok "rl_vs_imitation runs"
else
  bad "rl_vs_imitation exit $?:"; cat "$tmp/out"
fi
has "rl_vs_imitation: the cell" "$tmp/rv.md" "| ptb | 2 | 0.900 | 0.810 | 1/1 | 0.800 | 0.840 | 0/1 |"
has "rl_vs_imitation: per seed" "$tmp/rv.md" "| ptb | greedy \`policy\` | 0.900 | 0.900 |"
has "rl_vs_imitation: per seed, search" "$tmp/rv.md" "| ptb | \`policy-search\` | 1.050 | 1.050 |"
expect_fail "rl_vs_imitation: no CSVs" "no rl_vs_imitation CSVs" \
  "$py" "$exp/summarize_rl_vs_imitation.py" "$tmp/empty_nothing" 6262 1000

# --- summarize_rl_after_imitation.py: one seed, two graphs.  Imitation greedy 0.9 and 1.1
# (geometric mean 0.995), RL 0.81 and 0.99 (0.895): ratio 0.900, better.  Best of 8: RL worse.
ra=$tmp/ra/s1
mkdir -p "$ra"
hdr='graph,method,feasible,place_ms,ratio_to_best_classical'
printf '%s\ng0,policy-greedy,true,50,0.9\ng1,policy-greedy,true,50,1.1\ng0,policy-best-of-8,true,150,0.8\ng1,policy-best-of-8,true,150,0.8\n' "$hdr" > "$ra/eval_imitation.csv"
printf '%s\ng0,policy-greedy,true,40,0.81\ng1,policy-greedy,true,60,0.99\ng0,policy-best-of-8,true,150,0.9\ng1,policy-best-of-8,false,150,0.1\n' "$hdr" > "$ra/eval_rl.csv"
if "$py" "$exp/summarize_rl_after_imitation.py" "$tmp/ra" 1 > "$tmp/ra.md" 2> "$tmp/out"; then
  ok "rl_after_imitation runs"
else
  bad "rl_after_imitation exit $?:"; cat "$tmp/out"
fi
has "rl_after_imitation: greedy row" "$tmp/ra.md" "| 1 | greedy | 0.995 | 0.895 | 0.900 | 60 |"
has "rl_after_imitation: infeasible rows left out" "$tmp/ra.md" "| 1 | best of 8 | 0.800 | 0.900 | 1.125 | 150 |"
has "rl_after_imitation: count" "$tmp/ra.md" "greedy: RL after imitation better on 1 of 1 seeds"
expect_fail "rl_after_imitation: missing report" "No such file" \
  "$py" "$exp/summarize_rl_after_imitation.py" "$tmp/empty_nothing" 1

# --- summarize_memory_zoo.py: one cell, two seeds at T = 1 s.  auto / anneal: 120/100 and
# 90/100, geometric mean sqrt(1.2 * 0.9) = 1.0392, max 1.2; m-topo does not fit in seed 1
# where partition does (900 + 200 - 1000)/1000 = 0.1 over); policy-search fits in seed 1 only.
mz=$tmp/mz/m/d2_f1.2
mkdir -p "$mz"
printf 'name: m\nmode: compatible\ndevices: 2\nmemory_bytes: 1000\n' > "$mz/cluster.yaml"
hdr='graph,method,devices,runtime_us,peak_mem_bytes_max,feasible,place_ms,lower_bound_us,note'
over="no feasible placement found by m-topo for graph 'm': device 1 over capacity (gpu1: peak activations 900 + parameters 200 bytes > capacity 1000)"
for s in 1 2; do
  auto=$((s == 1 ? 120000 : 90000)) topo=$((s == 1 ? 0 : 1))
  {
    echo "$hdr"
    echo "m,partition,2,200000,500,true,1,50000,"
    echo "m,m-etf,2,200000,500,true,1,50000,"
    echo "m,m-sct,2,210000,500,true,1,50000,"
    if ((topo)); then echo "m,m-topo,2,205000,500,true,1,50000,"; else
      echo "m,m-topo,2,190000,900,false,1,50000,\"$over\""; fi
    echo "m,best,2,200000,500,true,1,50000,partition"
    echo "m,anneal,2,100000,500,true,1000,50000,9 simulations"
    echo "m,auto,2,$auto,500,true,1000,50000,9 simulations"
    echo "m,best-classical,2,200000,500,true,5,50000,partition"
  } > "$mz/s${s}_t1000.csv"
  feasible=$([[ $s == 1 ]] && echo true || echo false)
  printf '{"feasible":%s,"runtime_us":150000,"peak_mem_bytes":[500,%d],"param_bytes":[100,100],"lower_bound_us":50000,"place_ms":1000}\n' \
    "$feasible" $((s == 1 ? 600 : 1100)) > "$mz/s${s}_t1000.policy-search.json"
done
run memory_zoo "$py" "$exp/summarize_memory_zoo.py" "$tmp/mz"
has "memory_zoo: auto / anneal" "$tmp/mz/summary.md" "| m | 2 | 1.2 | 1 | anneal | 1.0392 | 2 | 1.2000 | 2/2 |"
has "memory_zoo: cell row" "$tmp/mz/summary.md" "| 200 | 210 | x (1/2) | 200 | 200 | 100 | 104 | x (1/2) | anneal@1s (100) |"
has "memory_zoo: the failed check counted" "$tmp/mz/summary.md" "| memory-aware fit where partition fits | 6 | 1 |"
has "memory_zoo: the failed check named" "$tmp/mz/summary.md" "- m-topo: m D=2 f=1.2 T=1s seed 1"
has "memory_zoo: overflow from the message" "$tmp/mz/results.csv" \
  "m,2,1.2,1000,1000,1,m-topo,0,0.1,190000.0,900,50000.0,1.0,does not fit"
has "memory_zoo: policy-search overflow" "$tmp/mz/results.csv" "m,2,1.2,1000,1000,2,policy-search,0,0.2,"
expect_fail "memory_zoo: no runs" "no runs under" "$py" "$exp/summarize_memory_zoo.py" "$tmp/empty_nothing"

# --- summarize_chain_anneal_check.py: one ptb graph uncapped, seeds 1 and 2.  Seed 1:
# chain-anneal / anneal 90/100, auto / anneal 80/100.  Seed 2: anneal does not fit, so both of
# its ratios are left out and the placement that does not fit is counted.
ca=$tmp/ca/runs/ptb/ptb_0
mkdir -p "$ca"
hdr='graph,method,devices,runtime_us,peak_mem_bytes_max,feasible,place_ms'
printf '%s\nptb_0,anneal,3,100,1,true,100\nptb_0,chain-anneal,3,90,1,true,100\nptb_0,auto,3,80,1,true,100\n' \
  "$hdr" > "$ca/d3_s1.csv"
printf '%s\nptb_0,anneal,3,100,1,false,100\nptb_0,chain-anneal,3,110,1,true,100\nptb_0,auto,3,70,1,true,100\n' \
  "$hdr" > "$ca/d3_s2.csv"
run chain_anneal_check "$py" "$exp/summarize_chain_anneal_check.py" "$tmp/ca"
has "chain_anneal_check: row" "$tmp/out" "| ptb | D = 3, no cap | 1, 1 | 0.900 | 0.900 | 0.800 | 0.800 | 1, 0, 0 |"
expect_fail "chain_anneal_check: no runs" "no runs under" \
  "$py" "$exp/summarize_chain_anneal_check.py" "$tmp/empty_nothing"
mkdir -p "$tmp/ca2/runs/nmt/nmt_0"
printf '%s\nnmt_0,anneal,3,100,1,true,100\n' "$hdr" > "$tmp/ca2/runs/nmt/nmt_0/d3_s1.csv"
expect_fail "chain_anneal_check: a missing method named" "d3_s1.csv has no row for chain-anneal, auto" \
  "$py" "$exp/summarize_chain_anneal_check.py" "$tmp/ca2"

# --- summarize_graph_scale.py: two graphs; the table's cells are place_ms and the step over
# best's; the plot is written.
gs=$tmp/gs
mkdir -p "$gs"
{
  printf 'graph\tops\tmethod\ttime_ms\tplace_ms\twall_s\trss_mb\tstep_us\tfeasible\n'
  printf 'ptb_1k\t944\tbest\t0\t47.2\t0.1\t19\t1000.0\ttrue\n'
  printf 'ptb_1k\t944\tpolicy\t0\t241.0\t0.9\t180\t850.0\ttrue\n'
  printf 'gpt12\t1374\tbest\t0\t10.3\t0.1\t20\t2000.0\ttrue\n'
  printf 'gpt12\t1374\tpolicy\t0\t98.7\t0.8\t180\t1996.0\tfalse\n'
} > "$gs/results.tsv"
run graph_scale "$py" "$exp/summarize_graph_scale.py" "$gs/results.tsv" "$gs/summary.md" "$gs/scale.png"
has "graph_scale: ptb row" "$gs/summary.md" "| ptb_1k | 944 | 0 | 180 | 47.2 ms, 1.000 | 241 ms, 0.850 |"
has "graph_scale: infeasible marked" "$gs/summary.md" "| gpt12 | 1374 | 0 | 180 | 10.3 ms, 1.000 | 98.7 ms, 0.998 (infeasible) |"
[[ -s $gs/scale.png ]] && ok "graph_scale: plot written" || bad "graph_scale: no plot"
printf 'graph\tops\tmethod\ttime_ms\tplace_ms\twall_s\trss_mb\tstep_us\tfeasible\n' > "$gs/empty.tsv"
expect_fail "graph_scale: no rows" "no rows" "$py" "$exp/summarize_graph_scale.py" "$gs/empty.tsv" \
  "$gs/x.md" "$gs/x.png"

# --- best_known_bound.py: one graph at 4 devices, two runs.  The best feasible step any row
# reached is auto's 80 in s1 (s2's auto at 50 does not fit; best-classical rows are not
# placements of their own).  Bars: s1 min(100, 120) = 100, s2 min(110, 105) = 105; ratios 0.8
# and 0.761905, geometric mean 0.780720; 6 placements counted.
bk=$tmp/bk
mkdir -p "$bk"
hdr='graph,method,devices,runtime_us,peak_mem_bytes_max,feasible,place_ms'
printf '%s\ng0,anneal,4,100,1,true,1000\ng0,descent,4,120,1,true,1000\ng0,best-classical,4,70,1,true,5\n' \
  "$hdr" > "$bk/d4_t1000_s1.csv"
printf '%s\ng0,auto,4,80,1,true,1000\ng0,policy-search,4,90,1,true,1000\n' "$hdr" > "$bk/d4_t1000_s1_m.csv"
printf '%s\ng0,anneal,4,110,1,true,1000\ng0,descent,4,105,1,true,1000\n' "$hdr" > "$bk/d4_t1000_s2.csv"
printf '%s\ng0,auto,4,50,1,false,1000\n' "$hdr" > "$bk/d4_t1000_s2_m.csv"
run best_known_bound "$py" "$exp/best_known_bound.py" "$bk"
has "best_known_bound: row" "$tmp/out" "| 4 | 2 | 6 | 0.781 | 0.762 |"
expect_fail "best_known_bound: missing directory" "$tmp/nope: not a directory" \
  "$py" "$exp/best_known_bound.py" "$tmp/nope"
mkdir -p "$tmp/bk_empty"
expect_fail "best_known_bound: no runs" "no d<D>_t1000_s<seed>" "$py" "$exp/best_known_bound.py" "$tmp/bk_empty"

finish
