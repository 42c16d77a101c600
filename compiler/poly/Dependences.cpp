/// \file Dependences.cpp: flow, anti and output dependences with isl, and loop verdicts (see
/// Dependences.h).
#include "poly/Dependences.h"

#include <isl/cpp.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "poly/IslSupport.h"
#include "support/Error.h"
#include "support/Format.h"

namespace spl::poly {

namespace {

std::string dims(const std::string &prefix, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + prefix + std::to_string(i);
  return s;
}

/// { Src[a..] -> Dst[b..] : a_0 = b_0, ..., a_{d-1} = b_{d-1}, a_d < b_d } in params space.
std::string carriedFilter(const PolyModel &m, const PolyStatement &src, const PolyStatement &dst, int depth) {
  std::string c;
  for (int j = 0; j < depth; ++j) c += "a" + std::to_string(j) + " = b" + std::to_string(j) + " and ";
  c += "a" + std::to_string(depth) + " < b" + std::to_string(depth);
  return m.paramSpace + " -> { " + src.name + "[" + dims("a", src.dims.size()) + "] -> " + dst.name + "[" +
         dims("b", dst.dims.size()) + "] : " + c + " }";
}

/// "flow dependence (read after write) on A (what) from S1 `text` to S4 `text`".
std::string describeDependence(const PolyModel &m, const PolyDependence &d) {
  static const char *words[] = {"flow dependence (read after write)", "anti dependence (write after read)",
                                "output dependence (write after write)"};
  const PolyArray &a = m.arrays[d.array];
  const PolyStatement &src = m.statements[d.source], &dst = m.statements[d.sink];
  return fmt::format("{} on {} ({}) from {} `{}` to {}{}", words[static_cast<int>(d.kind)], a.name, a.what, src.name, src.text,
                     dst.name, d.sink != d.source ? fmt::format(" `{}`", dst.text) : "");
}

class Analyzer {
 public:
  Analyzer(isl::ctx ctx, const PolyModel &m, DependenceAnalysis &out) : ctx_(ctx), m_(m), out_(out) {}

  void run() {
    isl::union_set domain = isl::union_set::empty(ctx_);
    isl::union_map sched = isl::union_map::empty(ctx_);
    for (const PolyStatement &st : m_.statements) {
      domain = domain.unite(isl::union_set(isl::set(ctx_, st.domain)));
      sched = sched.unite(isl::union_map(isl::map(ctx_, st.schedule)));
    }
    sched = sched.intersect_domain(domain);
    isl::union_map before = isl::manage(isl_union_map_lex_lt_union_map(sched.copy(), sched.copy()));
    for (size_t a = 0; a < m_.arrays.size(); ++a) arrayDependences(static_cast<int>(a), domain, sched, before);
    std::stable_sort(out_.deps.begin(), out_.deps.end(), [](const PolyDependence &x, const PolyDependence &y) {
      if (x.source != y.source) return x.source < y.source;
      if (x.sink != y.sink) return x.sink < y.sink;
      if (x.array != y.array) return x.array < y.array;
      return static_cast<int>(x.kind) < static_cast<int>(y.kind);
    });
    for (size_t l = 0; l < m_.loops.size(); ++l) out_.loops[l] = loopVerdict(static_cast<int>(l));
  }

 private:
  void arrayDependences(int array, const isl::union_set &domain, const isl::union_map &sched,
                        const isl::union_map &before) {
    isl::union_map reads = isl::union_map::empty(ctx_), must = reads, may = reads;
    bool any = false, written = false;
    for (const PolyStatement &st : m_.statements)
      for (const PolyAccess &a : st.accesses) {
        if (a.array != array) continue;
        isl::union_map rel(isl::map(ctx_, a.relation));
        any = true;
        written = written || a.write;
        if (!a.write) reads = reads.unite(rel);
        else if (a.must) must = must.unite(rel);
        else may = may.unite(rel);
      }
    if (!any || !written) return;
    reads = reads.intersect_domain(domain);
    must = must.intersect_domain(domain);
    may = may.intersect_domain(domain);
    isl::union_map writes = must.unite(may);
    isl::union_access_info info(reads);
    info = info.set_must_source(must).set_may_source(may).set_schedule_map(sched);
    isl::union_map flow = info.compute_flow().may_dependence();
    isl::union_map anti = reads.apply_range(writes.reverse()).intersect(before);
    isl::union_map output = writes.apply_range(writes.reverse()).intersect(before);
    record(DepKind::Flow, array, flow);
    record(DepKind::Anti, array, anti);
    record(DepKind::Output, array, output);
  }

  int statementIndex(const std::string &name) const {
    for (size_t i = 0; i < m_.statements.size(); ++i)
      if (m_.statements[i].name == name) return static_cast<int>(i);
    internal_error << "unknown statement " << name << " in a dependence";
    return -1;
  }

  void record(DepKind kind, int array, const isl::union_map &deps) {
    deps.foreach_map([&](isl::map map) {
      if (map.is_empty()) return;
      PolyDependence d;
      d.kind = kind;
      d.array = array;
      d.source = statementIndex(map.domain_tuple_id().name());
      d.sink = statementIndex(map.range_tuple_id().name());
      d.relation = islText(map.coalesce());
      out_.deps.push_back(d);
    });
  }

  /// The statement updates `array` as a reassociable accumulator and touches it nowhere else.
  bool isUpdateOf(const PolyStatement &st, int array, const std::string &op) const {
    if (st.reductionArray != array || st.reductionOp != op) return false;
    int reads = 0, writes = 0;
    for (const PolyAccess &a : st.accesses)
      if (a.array == array) (a.write ? writes : reads) += 1;
    return reads == 1 && writes == 1;
  }

  /// Every statement of the loop that touches `array` updates it with one op (atomically when
  /// `atomic`, as a local accumulator otherwise).
  bool onlyUpdates(int array, const PolyLoop &loop, bool atomic) const {
    if (m_.arrays[array].isLocal == atomic) return false;
    std::string op;
    for (int s : loop.statements) {
      const PolyStatement &st = m_.statements[s];
      bool touches = false;
      for (const PolyAccess &a : st.accesses) touches = touches || a.array == array;
      if (!touches) continue;
      if (op.empty()) op = st.reductionOp;
      if (op.empty() || st.atomic != atomic || !isUpdateOf(st, array, op)) return false;
    }
    return true;
  }
  bool isAccumulator(int array, const PolyLoop &loop) const { return onlyUpdates(array, loop, false); }
  bool isAtomicallyUpdated(int array, const PolyLoop &loop) const { return onlyUpdates(array, loop, true); }

  std::string describe(const PolyDependence &d, const std::string &carried, const PolyLoop &loop) const {
    return describeDependence(m_, d) + ", carried by " + loop.name + ": " + carried;
  }

  LoopAnalysis loopVerdict(int l) {
    const PolyLoop &loop = m_.loops[l];
    LoopAnalysis la;
    la.loop = l;
    std::set<int> inside(loop.statements.begin(), loop.statements.end());
    for (size_t i = 0; i < out_.deps.size(); ++i) {
      const PolyDependence &d = out_.deps[i];
      if (!inside.count(d.source) || !inside.count(d.sink)) continue;
      isl::map filter(ctx_, carriedFilter(m_, m_.statements[d.source], m_.statements[d.sink], loop.depth));
      isl::map carried = isl::map(ctx_, d.relation).intersect(filter);
      if (carried.is_empty()) continue;
      la.carried.push_back(static_cast<int>(i));
      la.carriedRelations.push_back(islText(carried.coalesce()));
    }
    if (la.carried.empty()) {
      la.verdict = LoopVerdict::Parallel;
      la.reason = "no dependence is carried";
      return la;
    }
    std::set<int> accumulators, atomics;
    for (size_t c = 0; c < la.carried.size(); ++c) {
      const PolyDependence &d = out_.deps[la.carried[c]];
      if (isAccumulator(d.array, loop)) {
        accumulators.insert(d.array);
        continue;
      }
      if (isAtomicallyUpdated(d.array, loop)) {
        atomics.insert(d.array);
        continue;
      }
      la.verdict = LoopVerdict::Sequential;
      la.reason = describe(d, la.carriedRelations[c], loop);
      return la;
    }
    if (accumulators.empty()) {
      // Atomic read-modify-writes commute: the iterations may run at once.
      la.verdict = LoopVerdict::Parallel;
      std::string names;
      for (int a : atomics) names += (names.empty() ? "" : ", ") + m_.arrays[a].name;
      la.reason = "only atomic updates of " + names + " carry dependences";
      return la;
    }
    la.verdict = LoopVerdict::Reduction;
    la.accumulators.assign(accumulators.begin(), accumulators.end());
    std::string names;
    for (int a : la.accumulators) {
      std::string op;
      for (int s : loop.statements)
        if (m_.statements[s].reductionArray == a) op = m_.statements[s].reductionOp;
      names += (names.empty() ? "" : ", ") + m_.arrays[a].name + " (" + op + ")";
    }
    la.reason = "only the reassociable accumulator" + std::string(la.accumulators.size() > 1 ? "s " : " ") + names +
                " carr" + (la.accumulators.size() > 1 ? "y" : "ies") + " dependences";
    return la;
  }

  isl::ctx ctx_;
  const PolyModel &m_;
  DependenceAnalysis &out_;
};

}  // namespace

const char *depKindName(DepKind k) {
  switch (k) {
    case DepKind::Flow: return "flow";
    case DepKind::Anti: return "anti";
    case DepKind::Output: return "output";
  }
  return "?";
}

const char *loopVerdictName(LoopVerdict v) {
  switch (v) {
    case LoopVerdict::Parallel: return "parallel";
    case LoopVerdict::Reduction: return "reduction";
    case LoopVerdict::Sequential: return "sequential";
    case LoopVerdict::Unknown: return "unknown";
  }
  return "?";
}

DependenceAnalysis analyzeDependences(const PolyModel &m, const DependenceOptions &opts) {
  DependenceAnalysis out;
  out.loops.resize(m.loops.size());
  for (size_t l = 0; l < m.loops.size(); ++l) out.loops[l].loop = static_cast<int>(l);
  std::string failure;
  {
    IslContext ctx(opts.maxOperations);
    try {
      Analyzer(ctx.ctx(), m, out).run();
    } catch (const isl::exception_quota &) {
      out.quotaExceeded = true;
    } catch (const isl::exception &e) {
      failure = e.what();
    }
  }
  internal_assert(failure.empty()) << "isl failed on the polyhedral model of " << m.kernel << ": " << failure;
  if (out.quotaExceeded) {
    out.deps.clear();
    for (LoopAnalysis &la : out.loops) {
      la = LoopAnalysis{};
      la.verdict = LoopVerdict::Unknown;
      la.reason = "isl ran out of its operations quota; treated as sequential";
    }
    for (size_t l = 0; l < m.loops.size(); ++l) out.loops[l].loop = static_cast<int>(l);
  }
  return out;
}

std::string print(const PolyModel &m, const DependenceAnalysis &d) {
  TextOut out;
  out("  dependences{}\n", d.quotaExceeded ? " (unknown: isl quota exceeded)" : "");
  if (d.deps.empty() && !d.quotaExceeded) out("    (none)\n");
  for (const PolyDependence &x : d.deps)
    out("    {:<7}{} -> {} on {}: {}\n", depKindName(x.kind), m.statements[x.source].name, m.statements[x.sink].name,
        m.arrays[x.array].name, x.relation);
  out("  loops\n");
  if (m.loops.empty()) out("    (none)\n");
  for (const LoopAnalysis &la : d.loops) {
    const PolyLoop &l = m.loops[la.loop];
    out("    {} (depth {}, lowered {}): {} -- {}\n", l.name, l.depth, cin::forallKindName(l.kind), loopVerdictName(la.verdict),
        la.reason);
  }
  return out.str();
}

std::string emitIsl(const cin::Kernel &k, const DependenceOptions &opts) {
  PolyModel m = buildPolyModel(k);
  DependenceAnalysis d = analyzeDependences(m, opts);
  return "kernel " + k.name + (k.cuda ? " (cuda)" : "") + (k.sizeFunction ? " (sizes)" : "") + "\n" + print(m) +
         print(m, d);
}

std::vector<std::string> checkLoopKinds(const PolyModel &m, const DependenceAnalysis &d) {
  std::vector<std::string> out;
  for (const LoopAnalysis &la : d.loops) {
    const PolyLoop &l = m.loops[la.loop];
    bool independent = l.kind == cin::ForallKind::Parallel || l.kind == cin::ForallKind::Vector;
    bool reduction = l.kind == cin::ForallKind::Reduction;
    if (!independent && !reduction) continue;
    bool ok = la.verdict == LoopVerdict::Parallel || (reduction && la.verdict == LoopVerdict::Reduction);
    if (ok) continue;
    out.push_back(m.kernel + ": loop " + l.name + " is " + cin::forallKindName(l.kind) + " in the lowering but " +
                  loopVerdictName(la.verdict) + " for isl: " + la.reason);
  }
  return out;
}

FusionCheck checkFusion(const PolyModel &m, const DependenceAnalysis &d, int a, int b, const std::vector<int> &between) {
  FusionCheck out;
  if (d.quotaExceeded) {
    out.conflict = "the dependences could not be decided (isl ran out of its operations quota)";
    return out;
  }
  IslContext owner(DependenceOptions{}.maxOperations);
  isl::ctx ctx = owner.ctx();
  const int depth = m.loops[a].depth;
  std::set<int> inA(m.loops[a].statements.begin(), m.loops[a].statements.end());
  std::set<int> inB(m.loops[b].statements.begin(), m.loops[b].statements.end());
  std::set<int> moved(between.begin(), between.end());
  // The dependence restricted to one iteration of the loops around a and b, and, when `order`
  // is given, to source index `order` sink index at a's and b's depth.
  auto part = [&](const PolyDependence &x, const char *order) {
    std::string c;
    for (int j = 0; j < depth; ++j) c += std::string(j ? " and " : "") + "a" + std::to_string(j) + " = b" + std::to_string(j);
    if (order) c += std::string(depth ? " and " : "") + "a" + std::to_string(depth) + " " + order + " b" + std::to_string(depth);
    const PolyStatement &src = m.statements[x.source], &dst = m.statements[x.sink];
    std::string filter = m.paramSpace + " -> { " + src.name + "[" + dims("a", src.dims.size()) + "] -> " + dst.name + "[" +
                         dims("b", dst.dims.size()) + "]" + (c.empty() ? "" : " : " + c) + " }";
    isl::map r = isl::map(ctx, x.relation).intersect(isl::map(ctx, filter));
    return r.is_empty() ? std::string() : islText(r.coalesce());
  };
  for (const PolyDependence &x : d.deps) {
    if (!inA.count(x.source)) continue;
    if (moved.count(x.sink)) {
      // The statements between the loops go before a: none may depend on a.
      std::string r = part(x, nullptr);
      if (!r.empty()) {
        out.conflict = "the statements between the loops would run before " + m.loops[a].name + ", but " +
                       describeDependence(m, x) + " orders them after it: " + r;
        return out;
      }
    }
    if (!inB.count(x.sink)) continue;
    // Iteration y of b runs right after iteration y of a: a source at x > y would come too late.
    std::string late = part(x, ">");
    if (!late.empty()) {
      out.conflict = "iteration y of " + m.loops[b].name + " would run before iteration x > y of " + m.loops[a].name +
                     " that it depends on: " + describeDependence(m, x) + ": " + late;
      return out;
    }
    if (!part(x, "<").empty()) out.carried = true;
  }
  return out;
}

std::string checkPermutableBand(const PolyModel &m, const DependenceAnalysis &d, int outer, int inner) {
  if (d.quotaExceeded) return "the dependences could not be decided (isl ran out of its operations quota)";
  IslContext owner(DependenceOptions{}.maxOperations);
  isl::ctx ctx = owner.ctx();
  const int depth = m.loops[outer].depth;
  std::set<int> band(m.loops[inner].statements.begin(), m.loops[inner].statements.end());
  // The outer loop's reassociable accumulators (a reduce): their updates may run in any order.
  std::set<int> reassociable;
  if (d.loops[outer].verdict == LoopVerdict::Reduction)
    reassociable.insert(d.loops[outer].accumulators.begin(), d.loops[outer].accumulators.end());
  for (const PolyDependence &x : d.deps) {
    if (!band.count(x.source) || !band.count(x.sink) || reassociable.count(x.array)) continue;
    const PolyStatement &src = m.statements[x.source], &dst = m.statements[x.sink];
    std::string c;
    for (int j = 0; j < depth; ++j) c += "a" + std::to_string(j) + " = b" + std::to_string(j) + " and ";
    std::string o = std::to_string(depth), i = std::to_string(depth + 1);
    c += "(a" + o + " > b" + o + " or a" + i + " > b" + i + ")";
    isl::map backwards = isl::map(ctx, x.relation)
                             .intersect(isl::map(ctx, m.paramSpace + " -> { " + src.name + "[" +
                                                                dims("a", src.dims.size()) + "] -> " + dst.name + "[" +
                                                                dims("b", dst.dims.size()) + "] : " + c + " }"));
    if (!backwards.is_empty())
      return describeDependence(m, x) + " goes backwards in " + m.loops[outer].name + " or " + m.loops[inner].name + ": " +
             islText(backwards.coalesce());
  }
  return "";
}

std::string checkDistribution(const PolyModel &m, const DependenceAnalysis &d, int loop, const std::map<int, int> &partOf) {
  if (d.quotaExceeded) return "the dependences could not be decided (isl ran out of its operations quota)";
  const LoopAnalysis &a = d.loops[static_cast<size_t>(loop)];
  for (size_t c = 0; c < a.carried.size(); ++c) {
    const PolyDependence &x = d.deps[static_cast<size_t>(a.carried[c])];
    auto src = partOf.find(x.source), dst = partOf.find(x.sink);
    if (src == partOf.end() || dst == partOf.end()) return describeDependence(m, x) + " leaves the distributed loop";
    if (src->second > dst->second)
      return describeDependence(m, x) + ", carried by " + m.loops[static_cast<size_t>(loop)].name + " from a later part to an earlier one: " +
             (c < a.carriedRelations.size() ? a.carriedRelations[c] : x.relation);
  }
  return "";
}

}  // namespace spl::poly
