// The trainers of this build (training/trainers.h), shared by `placeto train` and
// placeto_actor: the scorer's in every build; the Placeto policy's where LibTorch is built,
// from libplaceto_policy.so, loaded only when a config chooses it (launch/torch_module.h).
#include "improve/scorer_training.h"
#include "launch/commands.h"
#include "launch/torch_module.h"
#include "placeto/config.h"

namespace placeto {

void register_trainers() {
  register_scorer_trainer();
#if PLACETO_HAVE_TORCH
  TrainerInfo t;
  t.name = "placeto";
  t.top_key = "";
  t.comm_options = [](const RunOptions& o) {
    return torch_module(kPolicyModule).trainer.comm_options(o);
  };
  t.run = [](const RunOptions& o, Communicator& c) {
    return torch_module(kPolicyModule).trainer.run(o, c);
  };
  register_trainer(std::move(t));
#endif
}

}  // namespace placeto
