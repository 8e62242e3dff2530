// The trainers of this build (training/trainers.h): the scorer's in every build, the Placeto
// policy's where LibTorch is built in.  Shared by `placeto train` and placeto_actor.
#include "improve/scorer_training.h"
#include "launch/commands.h"
#include "placeto/config.h"
#if PLACETO_HAVE_TORCH
#include "learner/training_run.h"
#endif

namespace placeto {

void register_trainers() {
  register_scorer_trainer();
#if PLACETO_HAVE_TORCH
  register_placeto_trainer();
#endif
}

}  // namespace placeto
