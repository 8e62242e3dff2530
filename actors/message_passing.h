// The policy's message-passing variant as a typed configuration value, apart from policy.h
// so that torch-free code (the training config) can name it.
#pragma once

#include "common/enum_names.h"

namespace placeto {

// How node embeddings exchange messages (policy.message_passing): "radial" (rounds of
// neighbour aggregation), "sweep" (forward and backward passes over topological levels),
// "none".
enum class MessagePassing { kRadial, kSweep, kNone };
inline constexpr EnumName<MessagePassing> kMessagePassingNames[] = {
    {MessagePassing::kRadial, "radial"},
    {MessagePassing::kSweep, "sweep"},
    {MessagePassing::kNone, "none"}};

}  // namespace placeto
