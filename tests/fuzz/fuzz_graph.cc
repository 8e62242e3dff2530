// Graph JSON (sim/graph_io.h): parse_json_text, graph_from_json, and -- when the document
// also holds a "placement" like the simulator's test vectors -- placement_from_json on the
// graph just read.
#include <string>

#include "common/error.h"
#include "common/json_util.h"
#include "sim/graph_io.h"
#include "tests/fuzz/fuzz_targets.h"

namespace placeto::fuzz {

void fuzz_graph(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const Json doc = parse_json_text(text, "fuzz.json");
    // Test vectors wrap the graph: {"graph": {...}, "devices": D, "placement": {...}}.
    const bool wrapped = doc.is_object() && doc.contains("graph");
    const Graph g = graph_from_json(wrapped ? doc.at("graph") : doc, "fuzz.json");
    if (wrapped && doc.contains("placement")) (void)placement_from_json(doc, g, "fuzz.json");
  } catch (const Error&) {
    // Refused with a placeto error: the contract.  Anything else escapes and is a finding.
  }
}

}  // namespace placeto::fuzz

PLACETO_FUZZ_ENTRY(fuzz_graph)
