#!/usr/bin/env bash
# The distributed trainer under real mpirun: 1, 2 and 4 ranks hold identical parameters; a
# run SIGKILLed after checkpoint N and resumed ends with the same bytes in every dataset as a
# run of 2N iterations straight; another seed differs (negative control); a resume with
# another world size works and says it is not bit-exact.
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "$0")/../lib.sh"
pids=()
on_exit() { for p in "${pids[@]}"; do kill -9 -- "-$p" 2>/dev/null; done; }

mkdir -p "$tmp/graphs"
$py "$src/tests/mpi/make_tiny_graphs.py" "$tmp/graphs" 4 24 7
cat > "$tmp/cfg.yaml" <<Y
family_dir: $tmp/graphs
devices: 2
seed: 5
iterations: 6
episodes_per_iteration: 2
checkpoint_every: 3
lr: 3.0e-3
policy: {hidden: 8, rounds: 2}
Y
actor() { mpirun --oversubscribe -np "$1" "$bin/placeto_actor" --config "$tmp/cfg.yaml" "${@:2}"; }

# 1. Identical parameters on 1, 2 and 4 ranks.
for np in 1 2 4; do
  if actor "$np" --run-dir "$tmp/np$np" > "$tmp/np$np.out" 2>&1; then
    if grep -q "parameters identical on all $np ranks at iteration 6" "$tmp/np$np/logs/rank_0.log" &&
       [ "$(tail -n +2 "$tmp/np$np/metrics.csv" | wc -l)" -eq 6 ] &&
       grep -q "ckpt_6.h5" "$tmp/np$np/checkpoints/LATEST"; then
      ok "$np ranks: 6 iterations, identical parameters, final checkpoint"
    else
      bad "$np ranks: missing identity line, metrics rows or checkpoint"; cat "$tmp/np$np.out"
    fi
  else
    bad "$np ranks: exit code $?"; cat "$tmp/np$np.out"
  fi
done

# 2. Exact resume with 2 ranks: A runs 8 iterations straight; B is SIGKILLed after checkpoint
#    4 and resumed.
actor 2 --run-dir "$tmp/A" iterations=8 checkpoint_every=4 > "$tmp/A.out" 2>&1 || bad "run A failed"
setsid bash -c "source '$src/launch/env.sh'; mpirun --oversubscribe -np 2 \
  -x PLACETO_TEST_STALL_AFTER_CHECKPOINT=4 '$bin/placeto_actor' \
  --config '$tmp/cfg.yaml' --run-dir '$tmp/B' iterations=8 checkpoint_every=4 \
  > '$tmp/B1.out' 2>&1" &
bpid=$!
pids+=("$bpid")
# Rank 0 stalls after publishing checkpoint 4 (test hook), so the kill lands at a known point.
for _ in $(seq 1 1200); do
  grep -qs "stalling after checkpoint 4" "$tmp/B/logs/rank_0.log" && break
  sleep 0.05
done
kill -9 -- "-$bpid" 2>/dev/null
wait "$bpid" 2>/dev/null
if grep -qs "ckpt_8.h5" "$tmp/B/checkpoints/LATEST"; then
  bad "run B finished before it could be killed (test too fast for this machine?)"
elif ! grep -qs "ckpt_4.h5" "$tmp/B/checkpoints/LATEST"; then
  bad "run B never wrote checkpoint 4"; cat "$tmp/B1.out"
else
  ok "run B SIGKILLed after checkpoint 4"
  if actor 2 --run-dir "$tmp/B" --resume auto iterations=8 checkpoint_every=4 > "$tmp/B2.out" 2>&1 &&
     grep -q "resuming from .*ckpt_4.h5 at iteration 4" "$tmp/B/logs/rank_0.log"; then
    ok "run B resumed from checkpoint 4"
  else
    bad "run B did not resume"; cat "$tmp/B2.out"
  fi
  $py "$src/tests/mpi/ckpt_digests.py" "$tmp/A/checkpoints/ckpt_8.h5" > "$tmp/A.sha"
  $py "$src/tests/mpi/ckpt_digests.py" "$tmp/B/checkpoints/ckpt_8.h5" > "$tmp/B.sha"
  n=$(wc -l < "$tmp/A.sha")
  if [ "$n" -gt 10 ] && cmp -s "$tmp/A.sha" "$tmp/B.sha"; then
    ok "all $n datasets of the final checkpoints have the same SHA-256 in A and B"
  else
    bad "final checkpoints differ between A and B"; diff "$tmp/A.sha" "$tmp/B.sha" | head
  fi
fi

# 3. Negative control: another seed gives other parameters.
actor 2 --run-dir "$tmp/C" iterations=8 checkpoint_every=4 seed=6 > "$tmp/C.out" 2>&1 || bad "run C failed"
$py "$src/tests/mpi/ckpt_digests.py" "$tmp/C/checkpoints/ckpt_8.h5" > "$tmp/C.sha"
if ! grep -q "^model/" "$tmp/C.sha"; then
  bad "run C has no model datasets"
elif diff <(grep "^model/" "$tmp/A.sha") <(grep "^model/" "$tmp/C.sha") > /dev/null; then
  bad "seed 6 gave the same parameters as seed 5"
else
  ok "another seed gives different parameters (negative control)"
fi

# 4. Resume with another world size: works, and says it is not bit-exact.
cp -r "$tmp/A" "$tmp/D"
if actor 1 --run-dir "$tmp/D" --resume auto iterations=10 checkpoint_every=5 > "$tmp/D.out" 2>&1 &&
   grep -q "not bit-exactly" "$tmp/D/logs/rank_0.log" && grep -qs "ckpt_10.h5" "$tmp/D/checkpoints/LATEST"; then
  ok "resume of a 2-rank run with 1 rank"
else
  bad "resume with another world size"; cat "$tmp/D.out"
fi

# 5. Bad input: an unknown override key fails before training, naming the key.
if actor 2 --run-dir "$tmp/E" lerning_rate=1 > "$tmp/E.out" 2>&1; then
  bad "unknown key accepted"
elif grep -q "unknown config key 'lerning_rate'" "$tmp/E.out"; then
  ok "unknown override key refused with a clear message"
else
  bad "unclear error for an unknown key"; cat "$tmp/E.out"
fi

# 6. Imitation warm start (metis as teacher) then REINFORCE on 2 ranks: identical parameters,
# and the run directory records the settings.  A misspelt teacher is refused.
if actor 2 --run-dir "$tmp/F" iterations=6 imitation_teacher=metis imitation_iterations=4 \
     > "$tmp/F.out" 2>&1 &&
   grep -q "parameters identical on all 2 ranks at iteration 6" "$tmp/F/logs/rank_0.log" &&
   grep -q "imitation_iterations: 4" "$tmp/F/config.yaml"; then
  ok "imitation warm start then REINFORCE on 2 ranks"
else
  bad "imitation run"; cat "$tmp/F.out"
fi
if actor 1 --run-dir "$tmp/G" imitation_teacher=metsi imitation_iterations=2 > "$tmp/G.out" 2>&1; then
  bad "unknown teacher accepted"
elif grep -q "imitation_teacher.*'metsi' is not a placer (did you mean 'metis'?)" "$tmp/G.out"; then
  ok "unknown imitation teacher refused with a clear message"
else
  bad "unclear error for an unknown teacher"; cat "$tmp/G.out"
fi

finish trainer_mpi_test
