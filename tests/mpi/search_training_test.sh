#!/usr/bin/env bash
# The learned search's trainer under real mpirun: 2 ranks label and train a scorer, write
# metrics.csv and checkpoints that policy-search places with; a run stopped after epoch 2
# (as by a preemption) and resumed ends with the same bytes in every dataset as a straight
# run; a resume with another config is refused; a bad config names the file and field.
set -uo pipefail
bin=$1
src=$2
source "$src/launch/env.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { echo "PASS: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
py=/usr/bin/python3

cat > "$tmp/cfg.yaml" <<Y
search_policy:
  families: [ptb]
  graphs: 1
  graph_seed: 3
  devices: [2, 3]
  starts: 2
  max_moves: 3
  keep_rows: 32
  epochs: 4
  batch_states: 4
  hidden1: 8
  hidden2: 4
  seed: 2
Y
actor() { mpirun --oversubscribe -np 2 "$bin/placeto_actor" --config "$tmp/cfg.yaml" "$@"; }

# 1. A straight run.
if actor --run-dir "$tmp/A" > "$tmp/A.out" 2>&1 &&
   [ "$(tail -n +2 "$tmp/A/metrics.csv" | wc -l)" -eq 4 ] &&
   grep -q "ckpt_4.h5" "$tmp/A/checkpoints/LATEST"; then
  ok "2 ranks: 4 epochs, metrics rows, final checkpoint"
else
  bad "straight run"; cat "$tmp/A.out"
fi

# 2. Stopped after epoch 2 (exit 75, as after SIGTERM), resumed: the same bytes.
PLACETO_TEST_EXIT_AT_ITERATION=0:2 actor --run-dir "$tmp/B" > "$tmp/B1.out" 2>&1
rc=$?
if [ $rc -eq 75 ] && grep -q "ckpt_2.h5" "$tmp/B/checkpoints/LATEST"; then
  ok "stopped after epoch 2 with exit 75"
else
  bad "stop: exit $rc"; cat "$tmp/B1.out"
fi
if actor --run-dir "$tmp/B" --resume auto > "$tmp/B2.out" 2>&1 &&
   grep -q "resumed at epoch 2" "$tmp/B/logs/rank_0.log"; then
  $py "$src/tests/mpi/ckpt_digests.py" "$tmp/A/checkpoints/ckpt_4.h5" | grep -v "^meta" > "$tmp/A.sha"
  $py "$src/tests/mpi/ckpt_digests.py" "$tmp/B/checkpoints/ckpt_4.h5" | grep -v "^meta" > "$tmp/B.sha"
  if [ -s "$tmp/A.sha" ] && diff -q "$tmp/A.sha" "$tmp/B.sha" > /dev/null &&
     grep -q "model/scorer/w1" "$tmp/A.sha"; then
    ok "resumed run equals the straight run in every dataset"
  else
    bad "resumed run differs"; diff "$tmp/A.sha" "$tmp/B.sha" | head
  fi
else
  bad "resume"; cat "$tmp/B2.out"
fi

# 3. Without --resume a directory with checkpoints is refused; another config is refused.
if actor --run-dir "$tmp/A" > "$tmp/C.out" 2>&1; then
  bad "reused a run directory without --resume"
elif grep -q "already holds checkpoints" "$tmp/C.out"; then
  ok "a run directory with checkpoints needs --resume"
else
  bad "reuse message"; cat "$tmp/C.out"
fi
if actor --run-dir "$tmp/A" --resume auto hidden1=16 > "$tmp/D.out" 2>&1; then
  bad "resumed with another network shape"
elif grep -q "another search_policy config" "$tmp/D.out"; then
  ok "resume with another config is refused"
else
  bad "config message"; cat "$tmp/D.out"
fi

# 4. The checkpoint places: policy-search and the greedy policy on 2 and 4 devices.
"$bin/placeto" generate --family ptb --count 1 --seed 99 --out "$tmp/g" > /dev/null
for d in 2 4; do
  for m in policy-search policy; do
    if "$bin/placeto" place --graph "$tmp/g/ptb_0.json" --devices $d --method $m \
         --checkpoint "$tmp/A/checkpoints" --out "$tmp/p_${m}_$d.json" > "$tmp/p.out" 2>&1 &&
       grep -q '"runtime_us"' "$tmp/p.out"; then
      ok "$m places on $d devices"
    else
      bad "$m on $d devices"; cat "$tmp/p.out"
    fi
  done
done

# 5. A bad value names the file and the field, exit 2, nothing written.
printf 'search_policy:\n  families: [ptb]\n  epochs: 0\n' > "$tmp/bad.yaml"
mpirun --oversubscribe -np 2 "$bin/placeto_actor" --config "$tmp/bad.yaml" --run-dir "$tmp/E" > "$tmp/E.out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "bad.yaml" "$tmp/E.out" && grep -q "epochs" "$tmp/E.out" &&
   [ ! -d "$tmp/E/checkpoints" ]; then
  ok "bad config: exit 2 naming file and field"
else
  bad "bad config: exit $rc"; cat "$tmp/E.out"
fi

echo "search_training: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
