// Loading graphs and placements: what is accepted, and that every kind of bad input is
// refused with a message naming the file, the node or edge, and the value.
#include <gtest/gtest.h>

#include "common/error.h"
#include "sim/graph_io.h"

namespace placeto {
namespace {

Graph parse(const std::string& text) { return graph_from_json(Json::parse(text), "g.json"); }

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(GraphIo, ParsesCompactStructure) {
  Graph g = parse(R"({"format":"placeto-graph","version":1,"name":"t","nodes":[
      {"name":"b","cost_us":2,"out_bytes":[10,20]},{"name":"a","cost_us":1},
      {"name":"c","cost_us":3,"param_bytes":8,"extra":"ignored"}],
      "edges":[{"src":"b","dst":"c","out":1},{"src":"a","dst":"c"},{"src":"b","dst":"a","out":7}]})");
  EXPECT_EQ(g.name(), "t");
  ASSERT_EQ(g.num_nodes(), 3);
  EXPECT_EQ(g.num_edges(), 3);
  EXPECT_EQ(g.find("c"), 2);
  EXPECT_EQ(g.edge_bytes(0), 20);
  EXPECT_EQ(g.edge_bytes(2), 0);  // output index past the end: a 0-byte tensor
  EXPECT_EQ(g.param_bytes(2), 8);
  EXPECT_EQ(g.name_rank(g.find("a")), 0);
  EXPECT_EQ(g.name_rank(g.find("b")), 1);
  // Children of b in file order.
  ASSERT_EQ(g.out_degree(0), 2);
  EXPECT_EQ(g.edge_dst(g.child_edges()[g.child_begin(0)]), 2);
  EXPECT_EQ(g.topo_order(), (std::vector<NodeId>{0, 1, 2}));
  EXPECT_DOUBLE_EQ(g.critical_path_us(), 6.0);
  EXPECT_DOUBLE_EQ(g.total_cost_us(), 6.0);
}

TEST(GraphIo, RoundTripsThroughJson) {
  Graph g = parse(R"({"nodes":[{"name":"x","op":"MatMul","cost_us":1.5,"out_bytes":[3]},
      {"name":"y","cost_us":0}],"edges":[{"src":"x","dst":"y"}]})");
  Graph h = graph_from_json(graph_to_json(g), "again");
  EXPECT_EQ(graph_to_json(h), graph_to_json(g));
}

TEST(GraphIo, RejectsBadInputWithClearMessages) {
  EXPECT_EQ(error_of(R"({"nodes":[{"name":"a","cost_us":1}],"edges":[{"src":"a","dst":"zz"}]})"),
            "g.json: edges[0] (a -> zz).dst: unknown node \"zz\"");
  EXPECT_EQ(error_of(R"({"nodes":[{"name":"a","cost_us":1},{"name":"a","cost_us":2}]})"),
            "g.json: nodes[1] \"a\".name: duplicate node name \"a\"");
  EXPECT_EQ(error_of(R"({"nodes":[{"name":"a","cost_us":1},{"name":"b","cost_us":1}],
      "edges":[{"src":"a","dst":"b"},{"src":"a","dst":"b","out":1}]})"),
            "g.json: edges[1] (a -> b): duplicate edge \"a\" -> \"b\"");
  EXPECT_EQ(error_of(R"({"nodes":[{"name":"a","cost_us":1},{"name":"b","cost_us":1}],
      "edges":[{"src":"a","dst":"b"},{"src":"b","dst":"a"}]})"),
            "g.json: edges: the graph has a cycle through op \"a\"");
  EXPECT_EQ(error_of(R"({"nodes":[{"name":"a","cost_us":-1}]})"),
            "g.json: nodes[0] \"a\".cost_us: must be >= 0, got -1");
  EXPECT_EQ(error_of(R"({"nodes":[{"name":"a","cost_us":1,"out_bytes":[-5]}]})"),
            "g.json: nodes[0] \"a\".out_bytes[0]: must be >= 0, got -5");
  EXPECT_EQ(error_of(R"({"nodes":[{"name":"a","cost_us":"1"}]})"),
            "g.json: nodes[0] \"a\".cost_us: expected a number, got string \"1\"");
  EXPECT_EQ(error_of(R"({"nodes":{"a":1}})"),
            "g.json: nodes: expected an array, got object {\"a\":1}");
  EXPECT_EQ(error_of(R"({"version":2,"nodes":[]})"),
            "g.json: version: unsupported graph format version 2 (this build reads version 1)");
  EXPECT_EQ(error_of(R"({"edges":[]})"), "g.json: nodes: required field is missing");
  EXPECT_EQ(error_of(R"([1,2])"), "g.json: (document): expected an object, got array [1,2]");
  EXPECT_EQ(error_of(R"({"nodes":[{"name":"a","cost_us":1}],"edges":[{"src":"a","dst":"a"}]})"),
            "g.json: edges[0] (a -> a): self-loop on op \"a\" (the graph must be acyclic)");
}

TEST(GraphIo, NamesTheNodeAndBoundsEverySum) {
  // The node's name is in the path, escaped so that the message stays on one line.
  EXPECT_EQ(error_of(R"({"nodes":[{"name":"neg_op","cost_us":-5}]})"),
            "g.json: nodes[0] \"neg_op\".cost_us: must be >= 0, got -5");
  EXPECT_EQ(error_of("{\"nodes\":[{\"name\":\"q\\\"x\\ny\",\"cost_us\":-1}]}"),
            "g.json: nodes[0] \"q\\\"x\\ny\".cost_us: must be >= 0, got -1");
  // Finite numbers whose sums would overflow are refused one by one.
  EXPECT_EQ(error_of(R"({"nodes":[{"name":"a","cost_us":1e308}]})"),
            "g.json: nodes[0] \"a\".cost_us: must be <= 1e12 us (11.6 days; a units mistake?), "
            "got 1e+308");
  EXPECT_EQ(error_of(R"({"nodes":[{"name":"a","cost_us":1,"param_bytes":1125899906842625}]})"),
            "g.json: nodes[0] \"a\".param_bytes: must be <= 2^50 bytes (1 PiB), got "
            "1125899906842625");
  // The builder's own limit on the whole graph (2^62 bytes), reached with 2^50-byte tensors.
  GraphBuilder b("big");
  std::vector<int64_t> outs(1024, kMaxTensorBytes);
  b.add_node("a", "", 1, outs);
  b.add_node("b", "", 1, outs);
  b.add_node("c", "", 1, outs);
  b.add_node("d", "", 1, std::vector<int64_t>(1023, kMaxTensorBytes));
  try {
    b.add_node("e", "", 1, {kMaxTensorBytes, kMaxTensorBytes});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 2^62 bytes"), std::string::npos) << e.what();
  }
}

TEST(GraphIo, DeepNestingIsRefusedBeforeParsing) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  try {
    parse_json_text(deep, "deep.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "deep.json: not accepted: arrays and objects nest deeper than 64 levels (line 1)");
  }
  // Brackets inside strings do not count.
  EXPECT_NO_THROW(parse_json_text("[\"" + std::string(1000, '[') + "\"]", "s.json"));
}

TEST(GraphIo, OverflowingNumbersAreRejected) {
  // JSON has no NaN or infinity literal; a number that overflows a double is refused.
  try {
    graph_from_json(parse_json_text(R"({"nodes":[{"name":"a","cost_us":1e999}]})", "g.json"),
                    "g.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "g.json: not valid JSON (number overflow parsing '1e999')");
  }
}

TEST(PlacementIo, ValidatesEveryOp) {
  Graph g = parse(R"({"nodes":[{"name":"a","cost_us":1},{"name":"b","cost_us":1}]})");
  Placement p =
      placement_from_json(Json::parse(R"({"devices":2,"placement":{"a":1,"b":0}})"), g, "p.json");
  EXPECT_EQ(p.device, (std::vector<int32_t>{1, 0}));
  auto err = [&](const std::string& t) -> std::string {
    try {
      placement_from_json(Json::parse(t), g, "p.json");
    } catch (const InputError& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_EQ(err(R"({"devices":2,"placement":{"a":1}})"),
            "p.json: placement.\"b\": op is not placed");
  EXPECT_EQ(err(R"({"devices":2,"placement":{"a":1,"b":2}})"),
            "p.json: placement.\"b\": device 2 is out of range [0, 2)");
  EXPECT_EQ(err(R"({"devices":2,"placement":{"a":1,"b":0,"q":0}})"),
            "p.json: placement.\"q\": no op of that name in graph \"\" (is the placement for "
            "another graph?)");
  EXPECT_EQ(err(R"({"devices":0,"placement":{}})"), "p.json: devices: must be in [1, 4096], got 0");
}

}  // namespace
}  // namespace placeto
