#!/usr/bin/env bash
# The learned search's trainer under real mpirun: 2 ranks label and train a scorer, write
# metrics.csv and checkpoints that policy-search places with; a run stopped after epoch 2
# (as by a preemption) and resumed ends with the same bytes in every dataset as a straight
# run; a resume with another config is refused; a bad config names the file and field; RL
# epochs after the imitation resume exactly too, and can be added to a finished run; and
# none of it loads LibTorch.
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "$0")/../lib.sh"

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
  for m in policy-search scorer-greedy; do
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

# 6. RL after the imitation: 4 imitation + 2 RL epochs.  Stopped in the RL epochs and
#    resumed, or added to the finished imitation-only run A (--resume auto rl_epochs=2), the
#    result has the same bytes as the straight run; epochs cannot change once RL has begun.
rl=(rl_epochs=2 rl_episodes=2 rl_steps=3 rl_batch=1)
if actor --run-dir "$tmp/R" "${rl[@]}" > "$tmp/R.out" 2>&1 &&
   grep -q "ckpt_6.h5" "$tmp/R/checkpoints/LATEST" &&
   [ "$(grep -c ',rl,' "$tmp/R/metrics.csv")" -eq 2 ] &&
   head -1 "$tmp/R/metrics.csv" | grep -q "phase,rl_final_to_start,rl_improved"; then
  ok "RL epochs after the imitation: checkpoint 6, two rl rows in metrics.csv"
else
  bad "RL run"; cat "$tmp/R.out"
fi
$py "$src/tests/mpi/ckpt_digests.py" "$tmp/R/checkpoints/ckpt_6.h5" | grep -v "^meta" > "$tmp/R.sha"
PLACETO_TEST_EXIT_AT_ITERATION=0:5 actor --run-dir "$tmp/S" "${rl[@]}" > "$tmp/S1.out" 2>&1
rc=$?
if [ $rc -eq 75 ] && actor --run-dir "$tmp/S" --resume auto "${rl[@]}" > "$tmp/S2.out" 2>&1 &&
   grep -q "resumed at epoch 5" "$tmp/S/logs/rank_0.log" &&
   ! grep -q "labelled" "$tmp/S2.out"; then
  $py "$src/tests/mpi/ckpt_digests.py" "$tmp/S/checkpoints/ckpt_6.h5" | grep -v "^meta" > "$tmp/S.sha"
  if diff -q "$tmp/R.sha" "$tmp/S.sha" > /dev/null; then
    ok "stopped in the RL epochs and resumed: the same bytes as the straight run"
  else
    bad "RL resume differs"; diff "$tmp/R.sha" "$tmp/S.sha" | head
  fi
else
  bad "RL stop/resume: exit $rc"; cat "$tmp/S1.out" "$tmp/S2.out" 2>/dev/null | tail -20
fi
if actor --run-dir "$tmp/A" --resume auto "${rl[@]}" > "$tmp/T.out" 2>&1 &&
   grep -q "ckpt_6.h5" "$tmp/A/checkpoints/LATEST"; then
  $py "$src/tests/mpi/ckpt_digests.py" "$tmp/A/checkpoints/ckpt_6.h5" | grep -v "^meta" > "$tmp/T.sha"
  if diff -q "$tmp/R.sha" "$tmp/T.sha" > /dev/null &&
     head -1 "$tmp/A/metrics.csv" | grep -q "phase" &&
     [ "$(grep -c ',imitate,' "$tmp/A/metrics.csv")" -eq 4 ]; then
    ok "RL added to a finished imitation run equals the straight run; metrics.csv gains the columns"
  else
    bad "RL added to run A differs"; diff "$tmp/R.sha" "$tmp/T.sha" | head; cat "$tmp/A/metrics.csv"
  fi
else
  bad "adding RL to run A"; cat "$tmp/T.out"
fi
if actor --run-dir "$tmp/R" --resume auto "${rl[@]}" epochs=5 > "$tmp/U.out" 2>&1; then
  bad "changed epochs after RL began"
elif grep -q "RL has begun" "$tmp/U.out"; then
  ok "epochs cannot change once RL has begun"
else
  bad "epochs message"; cat "$tmp/U.out"
fi

# 7. A run directory written before issue #32 (keys lr_end and clip_norm, checkpoint of
#    commit c597cf1): today's trainer reproduces its epoch 2 in every dataset, and it resumes
#    under a config that names the keys lr_final and grad_clip (compared as values), to the
#    same epoch 3 as today's own run resumed the same way (both resumed without `features`:
#    they go on with the 27 what-if columns of their checkpoints).
old="$src/tests/data/old_runs/scorer_c597cf1"
cp -r "$old" "$tmp/old"
sed 's/lr_end:/lr_final:/; s/clip_norm:/grad_clip:/' "$old/config_old_names.yaml" > "$tmp/new_names.yaml"
one() { "$bin/placeto_actor" "$@"; }
digests() { $py "$src/tests/mpi/ckpt_digests.py" "$1" | grep -v "^meta"; }
# The old run's scorer reads the 27 what-if columns of before issue #33: features=27.
if one --config "$old/config_old_names.yaml" --run-dir "$tmp/now" features=27 > "$tmp/O1.out" 2>&1 &&
   digests "$tmp/now/checkpoints/ckpt_2.h5" > "$tmp/now2.sha" &&
   digests "$old/checkpoints/ckpt_2.h5" > "$tmp/old2.sha" && [ -s "$tmp/old2.sha" ] &&
   diff -q "$tmp/now2.sha" "$tmp/old2.sha" > /dev/null; then
  ok "today's trainer reproduces the old run's checkpoint in every dataset"
else
  bad "old run not reproduced"; diff "$tmp/now2.sha" "$tmp/old2.sha" | head; tail "$tmp/O1.out"
fi
if one --config "$tmp/new_names.yaml" --run-dir "$tmp/old" --resume auto epochs=3 > "$tmp/O2.out" 2>&1 &&
   grep -q "resumed at epoch 2" "$tmp/old/logs/rank_0.log" &&
   grep -q "lr_final: 0.001" "$tmp/old/config.yaml" &&
   one --config "$tmp/new_names.yaml" --run-dir "$tmp/now" --resume auto epochs=3 > "$tmp/O3.out" 2>&1 &&
   digests "$tmp/old/checkpoints/ckpt_3.h5" > "$tmp/old3.sha" &&
   digests "$tmp/now/checkpoints/ckpt_3.h5" > "$tmp/now3.sha" && [ -s "$tmp/old3.sha" ] &&
   diff -q "$tmp/old3.sha" "$tmp/now3.sha" > /dev/null; then
  ok "the old run directory resumes under the renamed keys, equal to today's run"
else
  bad "old run directory resume"; cat "$tmp/O2.out" "$tmp/O3.out" 2>/dev/null | tail -20
fi

# 8. Training the scorer never loads LibTorch: placeto_actor does not link it, and a whole
#    one-process run maps no libtorch (the dynamic loader's own record of what it loaded).
if ldd "$bin/placeto_actor" | grep -q "libtorch"; then
  bad "placeto_actor links libtorch"; ldd "$bin/placeto_actor" | grep torch
elif LD_DEBUG=files "$bin/placeto_actor" --config "$tmp/cfg.yaml" --run-dir "$tmp/L" epochs=1 \
       > "$tmp/L.out" 2>&1 && grep -q "ckpt_1.h5" "$tmp/L/checkpoints/LATEST"; then
  if grep -q "file=libtorch" "$tmp/L.out"; then
    bad "a scorer run loaded libtorch"; grep "file=libtorch" "$tmp/L.out" | head -3
  elif grep -q "file=libmpi" "$tmp/L.out"; then  # LD_DEBUG did record the loads
    ok "a scorer run maps no libtorch"
  else
    bad "LD_DEBUG recorded nothing"; head "$tmp/L.out"
  fi
else
  bad "one-process scorer run"; tail "$tmp/L.out"
fi

finish search_training
