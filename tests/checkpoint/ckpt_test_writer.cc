// Test helper, not installed.  Two modes:
//   ckpt_test_writer fixture PATH      write make_test_checkpoint(7) to PATH (+ PATH.sha256)
//   ckpt_test_writer loop DIR ELEMS    publish checkpoints with increasing steps into DIR
//                                      forever, printing each published step on stdout; the
//                                      SIGKILL test kills it at random moments.
#include <cstdlib>
#include <iostream>
#include <string>

#include "common/checkpoint/checkpoint_store.h"
#include "common/error.h"
#include "tests/checkpoint/test_checkpoint_data.h"

int main(int argc, char** argv) {
  try {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "fixture" && argc == 3) {
      placeto::write_checkpoint_file(argv[2], placeto::make_test_checkpoint(7));
      return 0;
    }
    if (mode == "loop" && argc == 4) {
      placeto::CheckpointStore store(argv[2], 3);
      const int64_t elems = std::atoll(argv[3]);
      auto steps = store.steps();
      for (int64_t step = steps.empty() ? 1 : steps.back() + 1;; ++step) {
        store.publish(placeto::make_test_checkpoint(step, elems));
        std::cout << step << std::endl;
      }
    }
    std::cerr << "usage: ckpt_test_writer fixture PATH | loop DIR ELEMS\n";
    return 64;
  } catch (const placeto::Error& e) {
    std::cerr << "ckpt_test_writer: " << e.what() << std::endl;
    return 2;
  }
}
