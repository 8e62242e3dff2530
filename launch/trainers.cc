// The trainers of this build (training/trainers.h): the scorer's in every build, the Placeto
// policy's where LibTorch is built in.  Shared by `placeto train` and placeto_actor.  In
// placeto_actor (PLACETO_TORCH_MODULE) the Placeto trainer lives in libplaceto_torch.so, loaded
// only when a config chooses it (launch/torch_module.h).
#include <mutex>
#include <optional>

#include "improve/scorer_training.h"
#include "launch/commands.h"
#include "placeto/config.h"
#if PLACETO_HAVE_TORCH
#if PLACETO_TORCH_MODULE
#include "launch/torch_module.h"
#else
#include "learner/training_run.h"
#endif
#endif

namespace placeto {

#if PLACETO_HAVE_TORCH && PLACETO_TORCH_MODULE
namespace {

const TrainerInfo& module_trainer() {
  static std::once_flag once;
  static TrainerInfo t;
  std::call_once(once, [] { t = load_placeto_trainer_module(); });
  return t;
}

}  // namespace
#endif

void register_trainers() {
  register_scorer_trainer();
#if PLACETO_HAVE_TORCH
#if PLACETO_TORCH_MODULE
  TrainerInfo t;
  t.name = "placeto";
  t.top_key = "";
  t.comm_options = [](const RunOptions& o) { return module_trainer().comm_options(o); };
  t.run = [](const RunOptions& o, Communicator& c) { return module_trainer().run(o, c); };
  register_trainer(std::move(t));
#else
  register_placeto_trainer();
#endif
#endif
}

}  // namespace placeto
