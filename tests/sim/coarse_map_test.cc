// The group map file (sim/coarse_map.h): written and read back with ONNX origins, every way a
// map can disagree with its graphs refused with the file, the field and the value, and the
// per-ONNX-node view of a placement.
#include "sim/coarse_map.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "common/error.h"
#include "common/files.h"
#include "sim/families/family.h"

namespace placeto {
namespace {

// A forward chain x -> a -> b -> c with a gradient op per forward op and one update, named
// and with origins as the ONNX importer gives them.
struct OnnxLike {
  Graph g;
  std::vector<OpOrigin> origins;
};

OnnxLike onnx_like() {
  GraphBuilder b("model.json");
  b.set_name("model");
  b.add_node("x", "Input", 0, {400});
  b.add_node("a", "Conv", 10, {400}, 64);
  b.add_node("b", "Relu", 1, {400});
  b.add_node("c", "Gemm", 5, {40});
  b.add_node("c/grad", "GemmGrad", 10, {400});
  b.add_node("b/grad", "ReluGrad", 1, {400});
  b.add_node("a/grad", "ConvGrad", 20, {400, 64});
  b.add_node("a/update", "ApplyGradient", 2, {});
  b.add_edge("x", "a");
  b.add_edge("a", "b");
  b.add_edge("b", "c");
  b.add_edge("c", "c/grad");
  b.add_edge("c/grad", "b/grad");
  b.add_edge("b/grad", "a/grad");
  b.add_edge("a/grad", "a/update", 1);
  OnnxLike m{b.build(), {}};
  m.origins = {{OpRole::kInput, "input.1", -1},  {OpRole::kForward, "/conv/Conv", 0},
               {OpRole::kForward, "", 1},        {OpRole::kForward, "/fc/Gemm", 3},
               {OpRole::kGrad, "/fc/Gemm", 3},   {OpRole::kGrad, "", 1},
               {OpRole::kGrad, "/conv/Conv", 0}, {OpRole::kUpdate, "/conv/Conv", 0}};
  return m;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("placeto_map_" + name + ".json")).string();
}

// A valid map of a family graph, edited by `edit` and written to a file; returns its path.
struct FamilyMap {
  Graph g;
  CoarseGraph c;
  std::string path;
};

FamilyMap family_map(const std::string& name,
                     const std::function<void(Json&, const Graph&)>& edit) {
  FamilySpec spec;
  spec.family = "cifar10";
  spec.layers = 1;
  FamilyMap m{generate_graph(spec, 0, 5), {}, temp_path(name)};
  m.c = coarsen(m.g, 12);
  Json doc = coarse_map_to_json(m.g, m.c);
  edit(doc, m.g);
  write_file_atomic(m.path, doc.dump(1));
  return m;
}

// Expects `f` to throw InputError whose message holds every one of `parts`.
void expect_input_error(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    for (const auto& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
          << "'" << p << "' not in: " << e.what();
  }
}

TEST(CoarseMap, RoundTripsWithOrigins) {
  OnnxLike m = onnx_like();
  CoarseGraph c = coarsen(m.g, 3);
  const std::string path = temp_path("origins");
  save_coarse_map(m.g, c, path, &m.origins);
  CoarseMap back = read_coarse_map(path, m.g);
  EXPECT_EQ(back.graph, "model");
  EXPECT_EQ(back.coarse_graph, c.graph.name());
  EXPECT_EQ(back.groups, c.graph.num_nodes());
  EXPECT_EQ(back.group, c.group);
  ASSERT_EQ(back.origins.size(), m.origins.size());
  for (size_t v = 0; v < m.origins.size(); ++v) {
    EXPECT_EQ(back.origins[v].role, m.origins[v].role) << v;
    EXPECT_EQ(back.origins[v].name, m.origins[v].name) << v;
    EXPECT_EQ(back.origins[v].node, m.origins[v].node) << v;
  }
  CoarseGraph matched = match_coarse_graph(back, path, m.g, c.graph, "c.json");
  EXPECT_EQ(matched.group, c.group);
}

TEST(CoarseMap, MapWithoutOriginsHasNone) {
  FamilyMap m = family_map("plain", [](Json&, const Graph&) {});
  CoarseMap back = read_coarse_map(m.path, m.g);
  EXPECT_TRUE(back.origins.empty());
  EXPECT_EQ(back.group, m.c.group);
}

TEST(CoarseMap, RefusesAMapOfAnotherGraph) {
  FamilyMap m = family_map("other_graph", [](Json& d, const Graph&) { d["graph"] = "resnet50"; });
  expect_input_error([&] { read_coarse_map(m.path, m.g); },
                     {m.path, "graph", "resnet50", m.g.name()});
}

TEST(CoarseMap, RefusesAMissingOp) {
  std::string op;
  FamilyMap m = family_map("missing_op", [&](Json& d, const Graph&) {
    op = d["map"].begin().key();
    d["map"].erase(op);
  });
  expect_input_error([&] { read_coarse_map(m.path, m.g); }, {m.path, "map", op, "no group"});
}

TEST(CoarseMap, RefusesAnUnknownOp) {
  FamilyMap m = family_map("unknown_op", [](Json& d, const Graph&) { d["map"]["no_such_op"] = 0; });
  expect_input_error([&] { read_coarse_map(m.path, m.g); }, {m.path, "map.no_such_op"});
}

TEST(CoarseMap, RefusesAGroupOutOfRange) {
  std::string op;
  FamilyMap m = family_map("out_of_range", [&](Json& d, const Graph&) {
    op = d["map"].begin().key();
    d["map"][op] = d["groups"].get<int>();
  });
  expect_input_error(
      [&] { read_coarse_map(m.path, m.g); },
      {m.path, "map." + op, "group " + std::to_string(m.c.graph.num_nodes()), "out of range"});
}

TEST(CoarseMap, RefusesAnEmptyGroup) {
  FamilyMap m = family_map("empty_group", [](Json& d, const Graph&) {
    for (auto& [op, gid] : d["map"].items())
      if (gid == 3) gid = 4;
  });
  expect_input_error([&] { read_coarse_map(m.path, m.g); }, {m.path, "group 3 has no op"});
}

TEST(CoarseMap, RefusesACyclicGrouping) {
  // Every op in group 0 but one with a parent and a child: 0 -> 1 -> 0.
  std::string middle;
  FamilyMap m = family_map("cyclic", [&](Json& d, const Graph& g) {
    for (NodeId v = 0; v < g.num_nodes() && middle.empty(); ++v)
      if (g.in_degree(v) > 0 && g.out_degree(v) > 0) middle = g.node_name(v);
    d["groups"] = 2;
    for (auto& [op, gid] : d["map"].items()) gid = op == middle ? 1 : 0;
  });
  ASSERT_FALSE(middle.empty());
  expect_input_error([&] { load_coarse_map(m.path, m.g); }, {m.path, "map", "cycle"});
}

TEST(CoarseMap, RefusesABadOrigin) {
  OnnxLike o = onnx_like();
  CoarseGraph c = coarsen(o.g, 3);
  Json doc = coarse_map_to_json(o.g, c, &o.origins);
  doc["origins"]["a/grad"]["role"] = "backward";
  const std::string path = temp_path("bad_origin");
  write_file_atomic(path, doc.dump());
  expect_input_error([&] { read_coarse_map(path, o.g); },
                     {path, "origins.a/grad.role", "backward"});
}

TEST(CoarseMap, RefusesAnotherCoarseGraph) {
  FamilyMap m = family_map("coarse_name", [](Json&, const Graph&) {});
  CoarseMap map = read_coarse_map(m.path, m.g);
  CoarseGraph other = coarsen(m.g, 8);
  expect_input_error([&] { match_coarse_graph(map, m.path, m.g, other.graph, "other.json"); },
                     {m.path, "coarse_graph", m.c.graph.name(), "other.json", other.graph.name()});
}

TEST(CoarseMap, RefusesAGroupCountUnlikeTheCoarseGraph) {
  FamilyMap m = family_map("group_count", [](Json&, const Graph&) {});
  CoarseMap map = read_coarse_map(m.path, m.g);
  map.coarse_graph = "renamed";
  GraphBuilder b("c.json");
  b.set_name("renamed");
  b.add_node("only", "Group", 1, {});
  Graph one = b.build();
  expect_input_error(
      [&] { match_coarse_graph(map, m.path, m.g, one, "c.json"); },
      {m.path, "groups", std::to_string(m.c.graph.num_nodes()) + " groups", "c.json", "1 nodes"});
}

TEST(CoarseMap, RefusesGroupsNumberedUnlikeTheCoarseGraph) {
  // Groups 0 and 1 swapped: same partition, but group 0 is no longer the coarse node 0.
  FamilyMap m = family_map("renumbered", [](Json& d, const Graph&) {
    for (auto& [op, gid] : d["map"].items()) gid = gid == 0 ? 1 : gid == 1 ? 0 : gid.get<int>();
  });
  CoarseMap map = read_coarse_map(m.path, m.g);
  expect_input_error([&] { match_coarse_graph(map, m.path, m.g, m.c.graph, "c.json"); },
                     {m.path, "group 0", "not node 0 of c.json", m.c.graph.node_name(0)});
}

TEST(CoarseMap, PlacementPerOnnxNode) {
  OnnxLike m = onnx_like();
  Placement p(3, m.g.num_nodes());
  p.device = {0, 1, 2, 0, 1, 2, 0, 1};
  Json j = placement_by_onnx_node(m.g, m.origins, p);
  ASSERT_EQ(j.size(), 4u);  // the input, then ONNX nodes 0, 1, 3
  EXPECT_EQ(j[0], (Json{{"input", "input.1"}, {"op", "x"}, {"forward", 0}}));
  EXPECT_EQ(j[1], (Json{{"node", 0},
                        {"name", "/conv/Conv"},
                        {"op", "a"},
                        {"forward", 1},
                        {"grad", 0},
                        {"update", 1}}));
  EXPECT_EQ(j[2], (Json{{"node", 1}, {"name", ""}, {"op", "b"}, {"forward", 2}, {"grad", 2}}));
  EXPECT_EQ(j[3],
            (Json{{"node", 3}, {"name", "/fc/Gemm"}, {"op", "c"}, {"forward", 0}, {"grad", 1}}));
}

TEST(CoarseMap, CompanionPaths) {
  EXPECT_EQ(companion_path("out/c.json", "map"), "out/c.map.json");
  EXPECT_EQ(companion_path("out/c.json", "fine"), "out/c.fine.json");
  EXPECT_EQ(companion_path("c", "map"), "c.map.json");
}

}  // namespace
}  // namespace placeto
