// End to end: ../shared/spec/examples/bfs.spl (BFS frontier expansion: per frontier node the
// write offsets of its unseen children, then the next frontier written contiguously as a
// dependent pair (k, k.idx[n])). Graphs are the test matrices' patterns (CSR column indices as
// children; a non-square matrix is padded to max(rows, cols) nodes, the extra ones childless)
// and seeded random graphs. Each kernel is checked against a plain C++ computation, and a whole
// BFS run level by level with the kernels is compared with a plain BFS.
#include <algorithm>
#include <memory>
#include <queue>

#include "bfs.h"
#include "e2e_support.h"

namespace {

struct Graph {
  std::string name;
  int64_t n = 0;
  std::vector<int32_t> nodes;  // n + 1 offsets
  std::vector<int32_t> edges;  // children, plus one spare element
};

Graph fromCsr(const std::string &name, const spl_csr &a) {
  Graph g;
  g.name = name;
  g.n = std::max(a.rows, a.cols);
  g.nodes.assign(a.offs, a.offs + a.rows + 1);
  g.nodes.resize(static_cast<size_t>(g.n) + 1, static_cast<int32_t>(a.nnz));
  g.edges.assign(a.cols_idx, a.cols_idx + a.nnz);
  g.edges.push_back(0);
  return g;
}

std::vector<Graph> makeGraphs() {
  std::vector<Graph> graphs;
  for (const spl_e2e::NamedMatrix &nm : spl_e2e::testMatrices()) graphs.push_back(fromCsr(nm.name, nm.m));
  struct Shape {
    const char *name;
    int64_t n;
    double density;
    spl_random_kind kind;
    uint64_t seed;
  };
  const Shape shapes[] = {
      {"random_uniform_1000", 1000, 0.004, SPL_RANDOM_UNIFORM, 101},
      {"random_skewed_2000", 2000, 0.002, SPL_RANDOM_SKEWED, 102},
      {"random_empty_rows_500", 500, 0.01, SPL_RANDOM_EMPTY_ROWS, 103},
      {"random_dense_60", 60, 0.5, SPL_RANDOM_UNIFORM, 104},
      {"random_single_node", 1, 1.0, SPL_RANDOM_UNIFORM, 105},
  };
  for (const Shape &s : shapes) {
    spl_csr a{};
    if (spl_random_csr(s.n, s.n, s.density, s.seed, s.kind, &a) != SPL_MATRIX_OK) {
      ADD_FAILURE() << "cannot generate " << s.name;
      continue;
    }
    graphs.push_back(fromCsr(s.name, a));
    spl_csr_free(&a);
  }
  return graphs;
}

const std::vector<Graph> &graphs() {
  static const std::vector<Graph> all = makeGraphs();
  return all;
}
constexpr size_t kNumGraphs = spl_e2e::kNumTestMatrices + 5;

/// A C bool array (std::vector<bool> is packed bits, not the ABI's `const bool *`).
struct Bools {
  explicit Bools(int64_t n) : n(n), p(new bool[static_cast<size_t>(n) + 1]()) {}
  int64_t n;
  std::unique_ptr<bool[]> p;
};

/// The plain computation: write offsets (exclusive scan of the unseen-children counts, m + 1
/// entries) and the next frontier (unseen children of each frontier node, in order, duplicates
/// kept).
void reference(const Graph &g, const Bools &seen, const std::vector<int32_t> &frontier, std::vector<int32_t> &wo,
               std::vector<int32_t> &next) {
  wo.assign(1, 0);
  next.clear();
  for (int32_t v : frontier) {
    for (int32_t e = g.nodes[v]; e < g.nodes[v + 1]; ++e)
      if (!seen.p[g.edges[e - g.nodes[0]]]) next.push_back(g.edges[e - g.nodes[0]]);
    wo.push_back(static_cast<int32_t>(next.size()));
  }
}

/// Runs the three kernels on one (seen, frontier) and compares with the reference. Returns the
/// kernel's next frontier (or the reference's if a kernel failed, so a caller can go on).
std::vector<int32_t> expand(const Graph &g, const Bools &seen, const std::vector<int32_t> &frontier,
                            const std::string &what) {
  const int64_t m = static_cast<int64_t>(frontier.size());
  std::vector<int32_t> wantWo, wantNext;
  reference(g, seen, frontier, wantWo, wantNext);
  const int64_t k = static_cast<int64_t>(wantNext.size());
  std::vector<int32_t> fr(frontier);
  fr.push_back(0);

  std::vector<int32_t> wo(static_cast<size_t>(m) + 2, -4242);
  EXPECT_EQ(spl_bfs_count(g.n, g.nodes.data(), g.edges.data(), seen.p.get(), m, fr.data(), wo.data()), SPL_OK) << what;
  EXPECT_EQ(wo.back(), -4242) << what << ": wrote past m + 1 write offsets";
  wo.pop_back();
  EXPECT_EQ(wo, wantWo) << what << ": write offsets";
  if (wo != wantWo) return wantNext;

  int64_t sizes[3] = {-1, -1, -99};
  EXPECT_EQ(spl_bfs_frontier_size(g.n, g.nodes.data(), g.edges.data(), seen.p.get(), m, fr.data(), wo.data(), sizes),
            SPL_OK)
      << what;
  EXPECT_EQ(sizes[0], 1) << what;
  EXPECT_EQ(sizes[1], k) << what;
  EXPECT_EQ(sizes[2], -99) << what;

  int64_t outK = -1;
  std::vector<int32_t> next(static_cast<size_t>(k) + 1, -4242);
  EXPECT_EQ(spl_bfs_frontier(g.n, g.nodes.data(), g.edges.data(), seen.p.get(), m, fr.data(), wo.data(), &outK,
                             next.data()),
            SPL_OK)
      << what;
  EXPECT_EQ(outK, k) << what;
  EXPECT_EQ(next.back(), -4242) << what << ": wrote past k";
  next.pop_back();
  EXPECT_EQ(next, wantNext) << what << ": next frontier";
  return next == wantNext ? next : wantNext;
}

/// m distinct node ids in random order.
std::vector<int32_t> randomFrontier(int64_t n, int64_t m, uint64_t seed) {
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) ids[i] = static_cast<int32_t>(i);
  uint64_t s = seed;
  for (int64_t i = 0; i < m; ++i) {
    int64_t j = i + static_cast<int64_t>(spl_splitmix64_next(&s) % static_cast<uint64_t>(n - i));
    std::swap(ids[i], ids[j]);
  }
  ids.resize(static_cast<size_t>(m));
  return ids;
}

class Bfs : public ::testing::TestWithParam<size_t> {};

TEST_P(Bfs, FrontierExpansion) {
  const Graph &g = graphs()[GetParam()];
  // A random third of the nodes, about 30% of all nodes seen.
  {
    Bools seen(g.n);
    uint64_t s = 7 + GetParam();
    for (int64_t i = 0; i < g.n; ++i) seen.p[i] = spl_splitmix64_next(&s) % 10 < 3;
    expand(g, seen, randomFrontier(g.n, (g.n + 2) / 3, 31 + GetParam()), g.name + ": random frontier");
  }
  // Every node in the frontier (in reverse order), nothing seen: the next frontier is every edge.
  {
    Bools seen(g.n);
    std::vector<int32_t> all(static_cast<size_t>(g.n));
    for (int64_t i = 0; i < g.n; ++i) all[i] = static_cast<int32_t>(g.n - 1 - i);
    std::vector<int32_t> next = expand(g, seen, all, g.name + ": all nodes, none seen");
    EXPECT_EQ(static_cast<int64_t>(next.size()), g.nodes[g.n] - g.nodes[0]) << g.name;
  }
  // Everything seen: no children.
  {
    Bools seen(g.n);
    for (int64_t i = 0; i < g.n; ++i) seen.p[i] = true;
    std::vector<int32_t> next = expand(g, seen, randomFrontier(g.n, g.n / 2, 41), g.name + ": all seen");
    EXPECT_TRUE(next.empty()) << g.name;
  }
  // An empty frontier.
  {
    Bools seen(g.n);
    expand(g, seen, {}, g.name + ": empty frontier");
  }
}

TEST_P(Bfs, WholeSearch) {
  // BFS from the node with the most children (node 0 on a tie), level by level with the kernels,
  // against a plain queue-based BFS.
  const Graph &g = graphs()[GetParam()];
  if (g.n == 0) return;
  int32_t source = 0;
  for (int32_t v = 0; v < g.n; ++v)
    if (g.nodes[v + 1] - g.nodes[v] > g.nodes[source + 1] - g.nodes[source]) source = v;

  std::vector<int64_t> want(static_cast<size_t>(g.n), -1);
  std::queue<int32_t> q;
  want[source] = 0;
  q.push(source);
  while (!q.empty()) {
    int32_t v = q.front();
    q.pop();
    for (int32_t e = g.nodes[v]; e < g.nodes[v + 1]; ++e)
      if (want[g.edges[e]] < 0) {
        want[g.edges[e]] = want[v] + 1;
        q.push(g.edges[e]);
      }
  }

  std::vector<int64_t> got(static_cast<size_t>(g.n), -1);
  Bools seen(g.n);
  std::vector<int32_t> frontier{source};
  seen.p[source] = true;
  got[source] = 0;
  int64_t level = 0, visited = 1;
  while (!frontier.empty() && level <= g.n) {
    ++level;
    std::vector<int32_t> next = expand(g, seen, frontier, g.name + ": level " + std::to_string(level));
    if (HasFailure()) break;
    frontier.clear();
    for (int32_t c : next)
      if (!seen.p[c]) {  // the kernel keeps duplicates: a node reached twice is visited once
        seen.p[c] = true;
        got[c] = level;
        frontier.push_back(c);
        ++visited;
      }
  }
  EXPECT_EQ(got, want) << g.name << ": BFS levels";
  RecordProperty("visited", static_cast<int>(visited));
}

INSTANTIATE_TEST_SUITE_P(Graphs, Bfs, ::testing::Range<size_t>(0, kNumGraphs),
                         [](const ::testing::TestParamInfo<size_t> &i) {
                           std::string n = graphs()[i.param].name;
                           for (char &c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(Bfs, ByHandWithDuplicates) {
  // 0 -> {1, 2}, 1 -> {2, 3}, 2 -> {}, 3 -> {0, 1, 2}; node 1 is seen. The frontier {3, 0}
  // reaches 2 twice: duplicates are kept.
  const int32_t nodes[] = {0, 2, 4, 4, 7};
  const int32_t edges[] = {1, 2, 2, 3, 0, 1, 2};
  bool seen[4] = {false, true, false, false};
  const int32_t frontier[] = {3, 0};
  int32_t wo[3] = {-1, -1, -1};
  ASSERT_EQ(spl_bfs_count(4, nodes, edges, seen, 2, frontier, wo), SPL_OK);
  EXPECT_EQ(wo[0], 0);
  EXPECT_EQ(wo[1], 2);
  EXPECT_EQ(wo[2], 3);
  int64_t k = -1;
  int32_t next[3] = {-1, -1, -1};
  ASSERT_EQ(spl_bfs_frontier(4, nodes, edges, seen, 2, frontier, wo, &k, next), SPL_OK);
  EXPECT_EQ(k, 3);
  EXPECT_EQ(next[0], 0);
  EXPECT_EQ(next[1], 2);
  EXPECT_EQ(next[2], 2);
}

TEST(Bfs, OffsetsNotStartingAtZero) {
  // The same graph with node offsets starting at 10 and write offsets starting at 5: child lists
  // start at nodes@v - nodes@0, outputs at wo@i - wo@0, and k = wo@m - wo@0.
  const int32_t nodes[] = {10, 12, 14, 14, 17};
  const int32_t edges[] = {1, 2, 2, 3, 0, 1, 2};
  bool seen[4] = {false, true, false, false};
  const int32_t frontier[] = {3, 0};
  int32_t wo[3] = {-1, -1, -1};
  ASSERT_EQ(spl_bfs_count(4, nodes, edges, seen, 2, frontier, wo), SPL_OK);
  EXPECT_EQ(wo[0], 0);
  EXPECT_EQ(wo[1], 2);
  EXPECT_EQ(wo[2], 3);
  const int32_t wo5[] = {5, 7, 8};
  int64_t sizes[2] = {-1, -1};
  ASSERT_EQ(spl_bfs_frontier_size(4, nodes, edges, seen, 2, frontier, wo5, sizes), SPL_OK);
  EXPECT_EQ(sizes[0], 1);
  EXPECT_EQ(sizes[1], 3);
  int64_t k = -1;
  int32_t next[3] = {-1, -1, -1};
  ASSERT_EQ(spl_bfs_frontier(4, nodes, edges, seen, 2, frontier, wo5, &k, next), SPL_OK);
  EXPECT_EQ(k, 3);
  EXPECT_EQ(next[0], 0);
  EXPECT_EQ(next[1], 2);
  EXPECT_EQ(next[2], 2);
}

}  // namespace
