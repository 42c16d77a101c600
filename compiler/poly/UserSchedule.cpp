/// \file UserSchedule.cpp: `schedule NAME for TARGET { ... }` blocks (LANGUAGE.md section 9).
///
/// Loops are named by their index variables as `--emit=cin` prints them (`forall i`, `forall k`);
/// a name refers to the first loop of that name in program order. Commands, in the manner of
/// taco's scheduling language:
///   split(i, i0, i1, f)       i becomes i0 (outer) over i1 (inner, f iterations), guarded when
///                             f does not divide the length; always legal
///   tile(i, j, a, b)          tiles the perfect nest i { j } into a x b tiles through isl: the
///                             nest's domain gets a tiled band schedule
///                             (isl_schedule_band_tile) and the loops come from isl's AST
///                             (poly/Tile.h): tile loops i_tile, j_tile over point loops i, j;
///                             legal when both loops are independent (a permutable band)
///   reorder(i, j)             interchanges a perfect nest through isl (the band
///                             S[i, j] -> [j, i], poly/Tile.h) when both loops are independent
///                             or the band is permutable (an update of one element per (i, j)
///                             carried by i); inner bounds may be affine in the outer index (a
///                             triangle); split's guard `i0 f + i1 < n` in i is first made i's
///                             bound, and a loop j over the rest of a row after i ([0, n - i - 1)
///                             reading j + i + 1) is first shifted to the positions it reads
///                             ([i + 1, n) reading j). When j is one of several statements of i (a reduction's
///                             accumulator `acc = 0; forall j {...}; T[i] = f(acc)`), i is
///                             distributed around them with its private values expanded into
///                             arrays over i, and the middle nest interchanged
///                             (poly/Distribute.h); legal when i carries no dependence
///   fuse(i, j)                merges two loops of one block (i first) into one loop through
///                             isl's schedule tree (poly/Fuse.h): iteration x runs i's body at x
///                             then j's; the statements between them move before i; where the
///                             bounds differ, the rest of the longer range is a loop NAME_rest.
///                             Refused when a dependence forbids that order (j at x reading what
///                             i produces at a later x, or a statement in between depending on
///                             i); a fused loop that carries a dependence runs in order. A loop
///                             over the rest of a row after the index of the loop around it is
///                             first shifted to the positions it reads, as for reorder
///   distribute(i, j)          loop i split around its statement j (a loop): i_before over the
///                             statements before j, i over j, i_after over those after it
///                             (poly/Distribute.h), values private to an iteration expanded
///                             into arrays over i; legal when no dependence i carries goes
///                             from a later part to an earlier one
///   parallelize(i, kind[, race])  kind: cpu_threads | serial | simd | gpu_block | gpu_warp |
///                             gpu_thread | gpu_lane | gpu_global. race (taco's output race strategies):
///                               no_races (default): only loops whose iterations are
///                                 independent run at once;
///                               atomics: iterations may update the same output element: each
///                                 update T[x] = T[x] op e inside the loop (op +, min or max)
///                                 becomes one atomic read-modify-write, and an accumulator
///                                 `acc = init; forall i {acc = acc op e}; T[x] = acc` becomes
///                                 `T[x] = init; forall i {T[x] atomic op= e}`;
///                               privatize (CPU): iterations may update the same elements
///                                 of arrays (`T[x] = T[x] op e`, op +, min or max, T read
///                                 nowhere else in the loop): the loop runs as eight parts,
///                                 part p every eighth iteration from p, each updating a
///                                 copy of T of its own, and the copies are combined into T
///                                 after it in part order (poly/Privatize.h): the same result
///                                 at every run and thread count;
///                               ignore_races: the user asserts the iterations do not conflict
///                                 (no check, as in taco)
///   scalar(i[, s])            loop i runs as one plain scalar loop: no vectors, no unrolling,
///                             no versions by row length; its reductions in s interleaved
///                             partial sums (1 to 8, default 1)
///   prefetch(k, d)            loop k over a compressed row's entries prefetches what its
///                             gathers will read d iterations ahead (loopir/GatherPrefetch.h)
///   vectorize(i[, bits[, v]])  loop i in vectors (of `bits`-wide registers, v of them a step:
///                             LLVM's interleave count)
///   unroll(i, f)              hints to LLVM's unroller; unroll of a tile's
///                             point loop [lo, min(X, lo + c)) with c <= f versions full tiles
///                             (X >= lo + c) from the last partial one: there the loop runs c
///                             iterations, unrolled, the loops around it stay scalar when it
///                             walks memory contiguously (its copies are the vectors), and a
///                             register tile's sums go to a local array (cin/RegisterTile.h);
///                             where the test is a row's own bound (a triangle's tiles at its
///                             diagonal), that row loop is split there instead; lo may be a
///                             max one arm of which starts the tile (the others must not
///                             exceed it in a full tile)
///   precompute(t)             `let t = <array>` is computed into a temporary where the let
///                             stands (taco's workspace), instead of being fused into each use;
///                             applied by the lowering (LowerOptions::precompute), checked here
///   specialize(c) { ... }     Halide's specialize: where c (a size of the export compared with
///                             a count: n < 32) holds, a version of the kernel as the commands
///                             before it left it, with the block's commands applied; the
///                             commands after it go on with the other version; the versions
///                             are tried in the order written (cpu kernels; fp_contract,
///                             fp_reassoc and plan set the whole kernel, so not in a block)
///   gpu_rows(i, m[, W])       the grid loop i puts its rows on threads as m: thread (a thread
///                             a row), vector (lanes a row, the width W or from the row lengths),
///                             merge (a merge path: equal nonzeros per lane), compact (a warp
///                             a row appending what passes a test in order); checked and
///                             applied in loop IR (loopir/GpuRowStrategy.h)
///   gpu_merge(i, R[, B])      the merge path of grid loop i: R nonzeros of a row read at once
///                             by each lane, registers kept for B blocks per multiprocessor
///   pos(k, c, f)              taco's position split: loop k over a compressed row (bounds
///                             [0, offs@(i+1) - offs@i)) and its row loop i become a loop c over
///                             chunks of f nonzeros; chunk c finds its first and last row by
///                             binary search in offs and runs those rows, each over its
///                             nonzeros inside the chunk. Rows shared by two chunks combine
///                             their partial results: a row accumulator `acc = init; forall k
///                             {acc = acc op e}; T[x] = acc` (op +, min or max) becomes
///                             `T[x] = init` for every row first, then `T[x] = T[x] op acc` per
///                             chunk, which parallelize(c, KIND, atomics) makes atomic. Every
///                             chunk does the same work whatever the row lengths.
/// A command that does not apply is refused with a diagnostic at the command saying why.
/// Legality comes from the polyhedral pass (poly/): the isl dependences of the kernel as it
/// stands when the command applies decide whether a loop may run in parallel, be vectorised,
/// interchanged or fused, and a refusal names the dependence that forbids it.
#include "poly/UserSchedule.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <variant>

#include "cin/RegisterTile.h"
#include "cin/Schedule.h"
#include "cin/SpmvPattern.h"
#include "cin/Visitor.h"
#include "poly/Dependences.h"
#include "poly/Distribute.h"
#include "poly/Fuse.h"
#include "poly/Privatize.h"
#include "poly/Tile.h"
#include "support/Format.h"

namespace spl::poly {
namespace {

using namespace cin;

class Scheduler {
 public:
  Scheduler(Kernel &k, const tir::Schedule &s, Diagnostics &d, int cpuVectorBits)
      : k_(k), s_(s), d_(d), cpuVectorBits_(cpuVectorBits) {}

  using AfterEach = std::function<void(const Kernel &, const tir::CommandBase &)>;

  bool run(const AfterEach &afterEach) {
    applyAll(s_.commands, afterEach);
    if (ok_) joinVersions();
    // privatize's parts get their version for little work once no command can name a loop
    // twice (poly/Privatize.h).
    if (ok_) k_.body = serialWhereFewParts(k_.body, k_.tensors, minPrivateWork(cpuVectorBits_));
    return ok_;
  }

 private:
  void error(SourceLoc loc, const std::string &msg) {
    d_.error(loc, msg);
    ok_ = false;
  }

  void names(const StmtP &s, std::vector<std::string> &out) const {
    anyStmt(s, [&](const Stmt &x) {
      if (x.kind == StmtKind::Forall && std::find(out.begin(), out.end(), x.varName) == out.end()) out.push_back(x.varName);
      return false;
    });
  }

  std::string loopList() const {
    std::vector<std::string> ns;
    names(k_.body, ns);
    std::string l;
    for (size_t i = 0; i < ns.size(); ++i) l += (i ? ", " : "") + ns[i];
    return l.empty() ? "none" : l;
  }

  const Stmt *find(const StmtP &s, const std::string &name) const {
    return findForall(s, [&](const Stmt &x) { return x.varName == name; });
  }

  /// A distribution's loops as statements of the block that held the loop it replaces (a block
  /// opens no scope), so that later commands find them side by side (fuse takes two loops of
  /// one block); a nest wrapped in its temporaries stays whole.
  static std::vector<StmtP> spliced(const StmtP &s) {
    if (s->kind == StmtKind::Block) return s->body;
    return {s};
  }

  /// Rebuilds the tree with `target` replaced by the statements `fn` returns.
  /// (In a block, the statements take the target's place among the block's own.)
  StmtP replace(const StmtP &s, const Stmt *target, const std::function<std::vector<StmtP>(const StmtP &)> &fn) {
    class Splice : public cin::Mutator {
     public:
      Splice(const Stmt *target, const std::function<std::vector<StmtP>(const StmtP &)> &fn) : target_(target), fn_(fn) {}
      StmtP mutate(const StmtP &s) override { return s && s.get() == target_ ? block(fn_(s)) : Mutator::mutate(s); }
      using Mutator::mutate;

     protected:
      StmtP mutateBlock(const StmtP &s) override {
        std::vector<StmtP> body;
        bool changed = false;
        for (const StmtP &b : s->body) {
          if (b && b.get() == target_) {
            std::vector<StmtP> r = fn_(b);
            body.insert(body.end(), r.begin(), r.end());
            changed = true;
          } else {
            body.push_back(mutate(b));
            changed = changed || body.back() != b;
          }
        }
        if (!changed) return s;
        auto c = std::make_shared<Stmt>(*s);
        c->body = std::move(body);
        return c;
      }

     private:
      const Stmt *target_;
      const std::function<std::vector<StmtP>(const StmtP &)> &fn_;
    };
    return Splice(target, fn).mutate(s);
  }

  /// The loop argument `a` (argument number `arg` of command `c`) names, or an error.
  const Stmt *loop(const tir::CommandBase &c, const tir::NameArg &a, size_t arg) {
    if (!a.ok) {
      error(c.loc, fmt::format("{}: argument {} must name a loop (the loops of {}: {})", c.name, arg + 1, k_.name, loopList()));
      return nullptr;
    }
    const Stmt *l = find(k_.body, a.text);
    if (!l) error(a.loc, c.name + ": no loop named '" + a.text + "' in " + k_.name + " (its loops: " + loopList() + ")");
    return l;
  }

  std::optional<int64_t> integer(const tir::CommandBase &c, const tir::CountArg &a, const char *what) {
    if (!a.ok) {
      error(a.loc, c.name + ": " + what + " must be a positive integer literal or a tunable");
      return std::nullopt;
    }
    return a.value;
  }

  /// The name argument `a` gives a new loop, or an error.
  std::optional<std::string> newName(const tir::CommandBase &c, const tir::NameArg &a, size_t arg) {
    if (!a.ok) {
      error(c.loc, fmt::format("{}: argument {} must be a name for a new loop", c.name, arg + 1));
      return std::nullopt;
    }
    if (find(k_.body, a.text)) {
      error(a.loc, c.name + ": a loop named '" + a.text + "' already exists");
      return std::nullopt;
    }
    return a.text;
  }

  /// The isl verdict of the loop with variable `var` in the kernel as it stands now (with the
  /// model and dependences when `model`/`deps` are given).
  LoopAnalysis analysis(int64_t var, PolyModel *model = nullptr, DependenceAnalysis *deps = nullptr) {
    PolyModel m = buildPolyModel(k_);
    DependenceAnalysis d = analyzeDependences(m);
    LoopAnalysis found;
    found.reason = "the loop is not in the polyhedral model";
    for (size_t i = 0; i < m.loops.size(); ++i)
      if (m.loops[i].var == var) found = d.loops[i];
    if (model) *model = std::move(m);
    if (deps) *deps = std::move(d);
    return found;
  }

  /// The model and dependences of the kernel as it stands, and the model's indices of the
  /// loops with variables `x` and `y` (-1 for a loop not in the model).
  std::pair<int, int> modelLoops(int64_t x, int64_t y, PolyModel &model, DependenceAnalysis &deps) {
    analysis(x, &model, &deps);
    int ix = -1, iy = -1;
    for (size_t l = 0; l < model.loops.size(); ++l) {
      if (model.loops[l].var == x) ix = static_cast<int>(l);
      if (model.loops[l].var == y) iy = static_cast<int>(l);
    }
    return {ix, iy};
  }

  /// Why a loop cannot run its iterations independently, or "" when it can. With
  /// `reductionOk`, a loop that only reassociates a reduction is accepted too.
  std::string dependence(const Stmt &l, bool reductionOk = false) {
    LoopAnalysis a = analysis(l.var);
    switch (a.verdict) {
      case LoopVerdict::Parallel: return "";
      case LoopVerdict::Reduction:
        if (reductionOk) return "";
        return "loop " + l.varName + " accumulates into one value (a reduce); running its iterations at once needs a "
               "race strategy: parallelize(" + l.varName + ", KIND, atomics)";
      case LoopVerdict::Sequential: return "loop " + l.varName + " runs in order: " + a.reason;
      case LoopVerdict::Unknown: return "the dependences of loop " + l.varName + " could not be decided (" + a.reason + ")";
    }
    return "";
  }

  void command(const tir::ScheduleCommand &c) {
    std::visit([this](const auto &typed) { apply(typed); }, c);
  }

  void applyAll(const std::vector<tir::ScheduleCommand> &commands, const AfterEach &afterEach) {
    afterEach_ = &afterEach;
    for (const tir::ScheduleCommand &c : commands) {
      command(c);
      if (ok_ && afterEach) afterEach(k_, tir::commandBase(c));
    }
  }

  /// specialize(cond) { ... } (Halide's specialize): a copy of the kernel as the commands so far
  /// left it takes the block's commands (its own specializations included) and runs where cond
  /// holds; this kernel goes on with the commands after the block. Versions stay apart until
  /// every command has applied (joinVersions), so that a loop name always means one loop.
  void apply(const tir::Specialize &c) {
    if (!c.blockGiven)
      return error(c.loc, "specialize: takes a condition and a block of commands for the version where it holds: "
                          "specialize(n < 32) { vectorize(k, 256); }");
    if (!c.condition.ok)
      return error(c.condition.loc, "specialize: the condition must compare a size of the export with a positive integer "
                                    "literal or a tunable (n < 32, n >= 4096)");
    if (k_.cuda) return error(c.loc, "specialize: versions of a kernel are for cpu schedules (a GPU export has none yet)");
    std::vector<std::string> sizes;
    const KernelParam *size = nullptr;
    for (const KernelParam &p : k_.params)
      if (p.abi.role == tir::AbiParam::Nat && p.natVar != 0) {
        sizes.push_back(p.abi.name);
        if (p.abi.name == c.condition.size.text) size = &p;
      }
    if (!size) {
      std::string list;
      for (size_t i = 0; i < sizes.size(); ++i) list += (i ? ", " : "") + sizes[i];
      return error(c.condition.size.loc, "specialize: '" + c.condition.size.text + "' is not a size of " + k_.name +
                                             " (its sizes: " + (list.empty() ? "none" : list) + ")");
    }
    Kernel version = k_;
    Scheduler inner(version, s_, d_, cpuVectorBits_);
    inner.inSpecialization_ = true;
    inner.applyAll(c.block->commands, *afterEach_);
    if (!inner.ok_) {
      ok_ = false;
      return;
    }
    inner.joinVersions();
    ExprP holds = binary(c.condition.op, natExpr(Nat::var(NatVarId{size->natVar, size->abi.name})),
                         constInt(c.condition.bound.value), Scalar::Bool);
    versions_.push_back({holds, std::move(version)});
  }

  void apply(const tir::MisplacedBlock &c) {
    error(c.loc, c.name + ": takes no block of commands (only specialize(cond) { ... } does)");
  }

  /// A command that sets the whole kernel, refused in a specialization's block.
  bool wholeKernel(const tir::CommandBase &c) {
    if (!inSpecialization_) return true;
    error(c.loc, c.name + ": sets the whole kernel, not one version of it; write it outside specialize");
    return false;
  }

  /// The specializations, each in its own branch, before the version the other commands made:
  ///   S_1; ...; S_p; if (cond_1) {version 1} else if (cond_2) {version 2} ... else {the kernel}
  /// with every temporary of every version. S_1..S_p are the statements every version begins
  /// with unchanged (the same nodes: no command rebuilt them, a view's base `x_base`), kept
  /// before the test, where the statements after it (a staged result's copy) see them.
  void joinVersions() {
    if (versions_.empty()) return;
    auto statements = [](const StmtP &s) { return s->kind == StmtKind::Block ? s->body : std::vector<StmtP>{s}; };
    std::vector<StmtP> mine = statements(k_.body);
    size_t shared = mine.size();
    for (const auto &v : versions_) {
      std::vector<StmtP> theirs = statements(v.second.body);
      size_t c = 0;
      while (c < shared && c < theirs.size() && theirs[c] == mine[c]) ++c;
      shared = c;
    }
    auto after = [&](const StmtP &body) {
      std::vector<StmtP> s = statements(body);
      return block(std::vector<StmtP>(s.begin() + static_cast<std::ptrdiff_t>(shared), s.end()));
    };
    StmtP chosen = after(k_.body);
    for (auto v = versions_.rbegin(); v != versions_.rend(); ++v) {
      chosen = ifThen(v->first, after(v->second.body), chosen);
      auto marked = std::make_shared<Stmt>(*chosen);
      marked->versions = true;
      chosen = marked;
      for (const TensorP &t : v->second.tensors)
        if (std::find(k_.tensors.begin(), k_.tensors.end(), t) == k_.tensors.end()) k_.tensors.push_back(t);
      k_.precomputed.insert(v->second.precomputed.begin(), v->second.precomputed.end());
    }
    std::vector<StmtP> body(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(shared));
    body.push_back(chosen);
    k_.body = block(std::move(body));
    versions_.clear();
  }

  /// vectorize(i[, bits[, vectors]]). `vectors` fixes how many vectors a step of the loop takes
  /// (LLVM's interleave count): a loop's vector part runs only as many steps as fit in its
  /// count, so with LLVM's four 16-lane vectors a step a reduction over 32 f32 elements ran
  /// all of them in its scalar remainder.
  void apply(const tir::Vectorize &c) {
    if (!c.arityOk)
      return error(c.loc, "vectorize: takes the loop, optionally the width of its vectors in bits (128, 256 or 512) and "
                          "then the vectors a step (1 to 8)");
    int bits = 0, vectors = 0;
    if (c.bitsGiven) {
      if (!c.bits.ok || (c.bits.value != 128 && c.bits.value != 256 && c.bits.value != 512))
        return error(c.bits.loc, "vectorize: the width of the vectors must be 128, 256 or 512 bits");
      bits = static_cast<int>(c.bits.value);
    }
    if (c.vectorsGiven) {
      if (!c.vectors.ok || c.vectors.value < 1 || c.vectors.value > 8)
        return error(c.vectors.loc, "vectorize: the vectors a step must be a literal from 1 to 8");
      vectors = static_cast<int>(c.vectors.value);
    }
    const Stmt *l = loop(c, c.loop, 0);
    if (!l) return;
    std::string why = dependence(*l, /*reductionOk=*/true);
    if (!why.empty()) {
      error(c.loc, "vectorize(" + l->varName + "): " + why);
      return;
    }
    k_.body = replace(k_.body, l, [&](const StmtP &s) {
      auto n = std::make_shared<Stmt>(*s);
      n->vectorize = true;
      n->vectorBits = bits;
      if (vectors) n->interleave = vectors;
      return std::vector<StmtP>{n};
    });
  }

  void apply(const tir::Unroll &c) {
    const Stmt *l = loop(c, c.loop, 0);
    auto f = integer(c, c.factor, "the unroll factor");
    if (!l || !f) return;
    if (versionFullTiles(*l, static_cast<int>(*f))) return;
    k_.body = replace(k_.body, l, [&](const StmtP &s) {
      auto n = std::make_shared<Stmt>(*s);
      n->unroll = static_cast<int>(*f);
      return std::vector<StmtP>{n};
    });
  }

  /// scalar(i[, sums]): the loop and nothing else runs scalar, once through each iteration
  /// (vector width and unroll 1; loopir/SegmentVersioning leaves a loop with hints as it is), its
  /// reductions in `sums` interleaved partial sums (LLVM's interleave count; 1 by default). A
  /// short compressed row wants one: on a 2-core AMD EPYC (Zen 5) stdlib's CSR kernel with its
  /// rows as one scalar loop ran the graphs and rows of random length 3-40% faster than with the
  /// versions (the plan's csr_short); rows of 50 to 100 entries two (consph, pwtk, kron_g500
  /// 7-11% faster: the plan's csr_two_sums, docs/plans.md).
  void apply(const tir::Scalar &c) {
    if (!c.arityOk)
      return error(c.loc, "scalar: takes a loop, which then runs as a plain scalar loop, and optionally its partial sums (1 to 8)");
    int sums = 1;
    if (c.sumsGiven) {
      if (!c.sums.ok || c.sums.value > 8) return error(c.sums.loc, "scalar: the partial sums must be a literal from 1 to 8");
      sums = static_cast<int>(c.sums.value);
    }
    const Stmt *l = loop(c, c.loop, 0);
    if (!l) return;
    if (l->forall == ForallKind::Parallel || l->forall == ForallKind::Vector || isGpuLevel(l->forall))
      return error(c.loc, fmt::format("scalar({}): the loop is {} here; a scalar loop runs its iterations one after another "
                                      "on one thread", l->varName, forallKindName(l->forall)));
    k_.body = replace(k_.body, l, [&](const StmtP &s) {
      auto n = std::make_shared<Stmt>(*s);
      n->vectorize = false;
      n->vectorWidth = 1;
      n->interleave = sums;
      n->unroll = 1;
      return std::vector<StmtP>{n};
    });
  }

  /// The farthest a prefetch(k, d) looks ahead, in iterations.
  static constexpr int64_t kMaxPrefetchAhead = 4096;

  /// prefetch(k, d): loop k, a compressed row's loop over its entries, reads its index stream d
  /// iterations ahead and prefetches the element that index names (loopir/GatherPrefetch.h):
  /// for rows whose gathers miss the caches (x larger than the L2, its columns scattered).
  void apply(const tir::Prefetch &c) {
    if (c.arity != 2)
      return error(c.loc, "prefetch: takes a loop and how many of its iterations ahead its gathers are prefetched (prefetch(k, 64))");
    const Stmt *l = loop(c, c.loop, 0);
    auto distance = integer(c, c.distance, "the distance");
    if (!l || !distance) return;
    if (k_.cuda)
      return error(c.loc, fmt::format("prefetch({}, {}): a CPU hint in a cuda schedule", l->varName, *distance));
    if (*distance > kMaxPrefetchAhead)
      return error(c.distance.loc, fmt::format("prefetch: the distance must be from 1 to {} iterations", kMaxPrefetchAhead));
    if (!l->segment || isGpuLevel(l->forall))
      return error(c.loc, fmt::format("prefetch({}, {}): the loop must run over a compressed level's entries (a CSR row's), "
                                      "on the CPU: its gathers read their indices from that stream, which it reads ahead",
                                      l->varName, *distance));
    k_.body = replace(k_.body, l, [&](const StmtP &s) {
      auto n = std::make_shared<Stmt>(*s);
      n->gatherAhead = static_cast<int>(*distance);
      return std::vector<StmtP>{n};
    });
  }

  /// A tile's point loop [lo, min(X, lo + c)) unrolled by f >= c: its full tiles (X >= lo + c,
  /// every tile but the last) get a version where the loop, and every other loop of the same
  /// bounds there (the copies a reorder's distribution made), runs exactly c
  /// iterations, unrolled completely: its body's values can stay in registers (a register
  /// tile's sums). lo may be a max(lo', e, ...) (a triangle's rows past the diagonal): full
  /// tiles then also need e <= lo'. The test stands inside the innermost loop whose variable it
  /// reads, so the loops between run once per version, or splits that loop (splitAtFullTiles).
  /// False when the loop is not of that form.
  bool versionFullTiles(const Stmt &l, int f) {
    std::optional<std::vector<Nat>> arms = minArms(l.hi);
    if (!arms) return false;
    // The lower bound: one value, or a max of which one arm starts the full tiles and the
    // others must not exceed it (a triangle's rows: ii in [max(0, k + 1 - 8 io), min(.., 8))).
    std::vector<Nat> loArms = maxArms(l.lo).value_or(std::vector<Nat>{l.lo});
    std::optional<Nat> whole, full, base;
    int64_t count = 0;
    for (const Nat &a : loArms)
      for (const Nat &arm : *arms) {
        std::optional<int64_t> d = (arm - a).asConst();
        if (!full && d && *d > 0 && *d <= f) {
          full = arm;
          base = a;
          count = *d;
        }
      }
    if (!full) return false;
    for (const Nat &arm : *arms)
      if (arm != *full) whole = whole ? Nat::min(*whole, arm) : arm;
    // The conditions of a full tile, each lhs <= rhs.
    std::vector<std::pair<Nat, Nat>> conditions;
    if (whole) conditions.emplace_back(*full, *whole);
    for (const Nat &a : loArms)
      if (a != *base) conditions.emplace_back(a, *base);
    if (conditions.empty()) return false;
    // The innermost loop around l whose variable the test reads: its body is the region.
    const Stmt *region = nullptr;
    std::vector<const Stmt *> path;
    std::function<bool(const StmtP &)> down = [&](const StmtP &s) {
      if (!s) return false;
      if (s.get() == &l) return true;
      if (s->kind == StmtKind::Forall) path.push_back(s.get());
      for (const StmtP &b : s->body)
        if (down(b)) return true;
      if (s->kind == StmtKind::Forall) path.pop_back();
      return false;
    };
    down(k_.body);
    for (const Stmt *p : path)
      for (const auto &[lhs, rhs] : conditions)
        if (lhs.mentions(p->var) || rhs.mentions(p->var)) region = p;
    Nat exact = *full;
    Nat partialHi = l.hi;
    // When the unrolled loop walks memory contiguously (a register tile's column), its copies
    // are the tile's vectors (LLVM's SLP vectoriser joins them): the loops around it stay scalar,
    // which LLVM's loop vectoriser would otherwise vectorise with gathers (gemm's k). When it
    // does not (gemv T's columns, lda apart), the loop around is the one to vectorise.
    bool vectorsAcross = anyStmt(l.body[0], [&](const Stmt &x) {
      auto unit = [&](const Expr &e) {
        if (e.kind != ExprKind::Access || e.tensor->kind == Tensor::Temp) return false;  // sums: registers
        std::optional<int64_t> d = strideOf(e, l.var).asConst();
        return d && (*d == 1 || *d == -1);
      };
      return anyExpr(x.value, unit) || anyExpr(x.lhs, unit);
    });
    std::function<StmtP(const StmtP &, bool &)> specialise = [&](const StmtP &s, bool &unrolled) -> StmtP {
      if (!s) return s;
      auto n = std::make_shared<Stmt>(*s);
      bool here = s->kind == StmtKind::Forall && s->lo == l.lo && s->hi == partialHi, below = false;
      if (here) {
        n->lo = *base;
        n->hi = exact;
        n->unroll = static_cast<int>(count);
      }
      for (StmtP &b : n->body) b = specialise(b, below);
      if (below && !here && s->kind == StmtKind::Forall && vectorsAcross) n->vectorWidth = 1;
      unrolled = unrolled || here || below;
      return n;
    };
    auto versions = [&](const StmtP &body) {
      ExprP test = allHold(conditions);
      bool unrolled = false;
      // Once every loop of a register tile is unrolled, its sums go to a local array.
      return ifThen(test, promoteRegisterTiles(specialise(body, unrolled), k_.tensors), body);
    };
    if (!region) {
      k_.body = versions(k_.body);
      return true;
    }
    k_.body = replace(k_.body, region, [&](const StmtP &s) {
      std::optional<std::vector<StmtP>> split = splitAtFullTiles(s, conditions, specialise);
      // Conditions free of the region's variable are tested once around the split loops.
      std::vector<std::pair<Nat, Nat>> hoisted;
      for (const auto &c : conditions)
        if (!c.first.mentions(s->var) && !c.second.mentions(s->var)) hoisted.push_back(c);
      if (split && hoisted.empty()) return *split;
      auto n = std::make_shared<Stmt>(*s);
      n->body = {versions(s->body[0])};
      if (split) return std::vector<StmtP>{ifThen(allHold(hoisted), block(*split), n)};
      return std::vector<StmtP>{n};
    });
    return true;
  }

  /// `lhs <= rhs` for every condition, as one test.
  static ExprP allHold(const std::vector<std::pair<Nat, Nat>> &conditions) {
    ExprP test;
    for (const auto &[lhs, rhs] : conditions) {
      ExprP c = binary(ast::BinOp::Le, natExpr(lhs), natExpr(rhs), Scalar::Bool);
      test = test ? binary(ast::BinOp::And, test, c, Scalar::Bool) : c;
    }
    return test;
  }

  /// The region loop r split where the full tiles start or end, when exactly one of the
  /// conditions (lhs <= rhs) reads r and is r >= t or r <= t (rhs - lhs is r or -r plus terms
  /// free of r: the rows of a triangle whose tile reaches the diagonal): a loop over r's full
  /// tiles with the specialised body and one over the others with the body as it was, instead
  /// of a test in every iteration (which keeps LLVM from vectorising r); the other conditions
  /// are the caller's to test around them. nullopt otherwise.
  std::optional<std::vector<StmtP>> splitAtFullTiles(const StmtP &r, const std::vector<std::pair<Nat, Nat>> &conditions,
                                                     const std::function<StmtP(const StmtP &, bool &)> &specialise) {
    std::optional<Nat> gap;
    for (const auto &[lhs, rhs] : conditions)
      if (lhs.mentions(r->var) || rhs.mentions(r->var)) {
        if (gap) return std::nullopt;
        gap = rhs - lhs;
      }
    if (!gap) return std::nullopt;
    return splitWhereFull(r, *gap, specialise);
  }

  std::optional<std::vector<StmtP>> splitWhereFull(const StmtP &r, const Nat &gapIn,
                                                   const std::function<StmtP(const StmtP &, bool &)> &specialise) {
    Nat v = Nat::var(NatVarId{r->var, r->varName}), gap = gapIn;
    NatSubst next;
    next.vars.emplace(r->var, v + Nat(1));
    std::optional<int64_t> coef = (substitute(gap, next) - gap).asConst();
    if (!coef || (*coef != 1 && *coef != -1) || (gap - Nat(*coef) * v).mentions(r->var)) return std::nullopt;
    // The full tiles are r >= t (coef 1: gap = r - t) or r < t (coef -1: gap = t - 1 - r).
    Nat t = *coef == 1 ? v - gap : v + gap + Nat(1);
    Nat cut = Nat::min(r->hi, Nat::max(r->lo, t));
    bool unrolled = false;
    auto full = std::make_shared<Stmt>(*r), partial = std::make_shared<Stmt>(*r);
    full->body = {promoteRegisterTiles(specialise(r->body[0], unrolled), k_.tensors)};
    StmtP first = *coef == 1 ? partial : full, second = *coef == 1 ? full : partial;
    auto firstLoop = std::make_shared<Stmt>(*first), secondLoop = std::make_shared<Stmt>(*second);
    firstLoop->hi = cut;
    secondLoop->lo = cut;
    // The second loop gets a variable of its own (two loops of one variable side by side).
    NatVarId fresh = freshNatVar(r->varName);
    NatSubst rename;
    rename.vars.emplace(r->var, Nat::var(fresh));
    secondLoop->var = fresh.id;
    secondLoop->body = {substitute(secondLoop->body[0], rename)};
    return std::vector<StmtP>{firstLoop, secondLoop};
  }

  /// Done by the lowering (cin/Lower.h, LowerOptions::precompute): check that it applied.
  void apply(const tir::Precompute &c) {
    if (!c.array.ok)
      return error(c.loc, "precompute: the argument must name an array bound by a let (precompute(t) for `let t = ...`)");
    if (!k_.precomputed.count(c.array.text))
      return error(c.array.loc, "precompute: no array named '" + c.array.text + "' is bound by a let in " + k_.name +
                                    " (a let of a scalar or a tuple is computed once already)");
  }

  /// fp_contract(off | fast): the kernel's products feeding sums fused or not (codegen).
  void apply(const tir::FpContract &c) {
    if (wholeKernel(c) && fpFreedomOk(c)) k_.fpContract = c.allowed;
  }
  /// fp_reassoc(off | fast): the kernel's sums regrouped by LLVM or kept in loop order (codegen).
  void apply(const tir::FpReassoc &c) {
    if (wholeKernel(c) && fpFreedomOk(c)) k_.fpReassoc = c.allowed;
  }
  bool fpFreedomOk(const tir::FpFreedom &c) {
    if (!c.ok)
      error(c.argLoc, c.name + " takes one argument, off or fast" +
                          (c.arity == 1 && !c.text.empty() ? ", found '" + c.text + "'" : std::string()));
    return c.ok;
  }

  /// plan(): the driver generates the plan's entry points and candidates; here the export is
  /// checked to be what they run in its place, a CSR SpMV (y = A x or y = A^T x) or a CSR
  /// matrix times a dense one (C = A B).
  void apply(const tir::Plan &c) {
    if (!wholeKernel(c)) return;
    if (c.arity != 0) return error(c.loc, "plan() takes no arguments");
    if (k_.cuda) return error(c.loc, "plan(): plans are for cpu schedules (a GPU export has no plan yet)");
    std::string whyNotSpmv, whyNotSpmm;
    if (std::optional<cin::CsrSpmv> spmv = cin::recogniseCsrSpmv(k_, whyNotSpmv)) {
      k_.planned = true;
      k_.planParams.assign(spmv->paramOf.begin(), spmv->paramOf.end());
      k_.planTransposed = spmv->transposed;
      return;
    }
    if (std::optional<cin::CsrSpmm> spmm = cin::recogniseCsrSpmm(k_, whyNotSpmm)) {
      k_.planned = true;
      k_.planParams.assign(spmm->paramOf.begin(), spmm->paramOf.end());
      k_.planSpmm = true;
      return;
    }
    // The SpMV's reason, unless the kernel is shaped as an SpMM (eight parameters).
    const std::string &why = k_.params.size() == 8 ? whyNotSpmm : whyNotSpmv;
    error(c.loc, "plan(): " + k_.name + " is not a CSR SpMV or SpMM that a plan can run in other kernels: " + why);
  }

  void apply(const tir::Unsupported &c) { error(c.loc, "schedule command '" + c.name + "' is not supported yet"); }

  void apply(const tir::UnknownCommand &c) {
    error(c.loc, "unknown schedule command '" + c.name + "' (the commands are " + tir::scheduleCommandNames() + ")");
  }

  /// gpu_rows(i, MAPPING): how the grid loop i puts its rows on threads. Recorded on the loop;
  /// loopir/GpuRowStrategy checks that the rows have the shape the mapping needs (the loop IR
  /// shows it) and applies it.
  void apply(const tir::GpuRows &c) {
    const Stmt *l = loop(c, c.loop, 0);
    if (!l) return;
    const ast::GpuRowMapping m = c.mapping;
    if (!c.mappingOk)
      return error(c.mappingLoc, "gpu_rows(" + l->varName + ", ...): the mapping must be one of thread, vector, merge, compact");
    if (!k_.cuda) return error(c.loc, "gpu_rows(" + l->varName + ", " + c.mappingText + "): a GPU mapping in a cpu schedule");
    int lanes = 0;
    if (c.widthGiven) {
      // The vector's width, instead of the one the rows' average length gives.
      if (m != ast::GpuRowMapping::Vector)
        return error(c.widthLoc, "gpu_rows(" + l->varName + ", " + c.mappingText + ", ...): only the vector mapping takes a width (lanes a row)");
      if (!c.widthOk)
        return error(c.widthLoc, "gpu_rows(" + l->varName + ", vector, ...): the lanes a row must be a power of two from 1 to 32 (a warp)");
      lanes = c.lanes;
    }
    k_.body = replace(k_.body, l, [&](const StmtP &s) {
      auto n = std::make_shared<Stmt>(*s);
      n->rows = m;
      n->knobs.lanes = lanes;
      n->rowsLoc = c.loc;
      return std::vector<StmtP>{n};
    });
  }

  /// gpu_merge(i, R[, B]): the merge path's knobs of grid loop i: each lane reads R of a row's
  /// nonzeros at once (1, 2, 4, 8 or 16), ptxas keeps registers for B blocks per multiprocessor
  /// (1 to 8). loopir/GpuRowStrategy refuses them where loop i does not run as a merge path.
  void apply(const tir::GpuMerge &c) {
    const Stmt *l = loop(c, c.loop, 0);
    if (!l) return;
    std::string asked = "gpu_merge(" + l->varName + ", ...)";
    if (!k_.cuda) return error(c.loc, asked + ": a GPU knob in a cpu schedule");
    if (!c.arityOk) return error(c.loc, asked + ": takes the loop, the reads per lane and optionally the blocks per multiprocessor");
    if (!c.readsOk) return error(c.readsLoc, asked + ": the nonzeros a lane reads at once must be 1, 2, 4, 8 or 16");
    if (!c.blocksOk) return error(c.blocksLoc, asked + ": the blocks per multiprocessor must be from 1 to 8");
    k_.body = replace(k_.body, l, [&](const StmtP &s) {
      auto n = std::make_shared<Stmt>(*s);
      n->knobs.mergeReads = c.reads;
      n->knobs.mergeBlocksPerSm = c.blocks;
      n->knobs.mergeLoc = c.loc;
      return std::vector<StmtP>{n};
    });
  }

  void apply(const tir::Split &c) {
    const Stmt *l = loop(c, c.loop, 0);
    auto outerName = newName(c, c.outer, 1), innerName = newName(c, c.inner, 2);
    auto f = integer(c, c.factor, "the split factor");
    if (!l || !outerName || !innerName || !f) return;
    k_.body = replace(k_.body, l, [&](const StmtP &s) {
      Nat n = s->hi - s->lo;
      NatVarId o = freshNatVar(*outerName), in = freshNatVar(*innerName);
      Nat within = Nat::var(o) * Nat(*f) + Nat::var(in);
      NatSubst sub;
      sub.vars.emplace(s->var, s->lo + within);
      StmtP body = substitute(s->body[0], sub);
      auto exact = Nat::divideExact(n, Nat(*f));
      if (!exact) body = ifThen(binary(ast::BinOp::Lt, natExpr(within), natExpr(n), Scalar::Bool), body);
      Nat outerLen = exact ? *exact : Nat::div(n + Nat(*f - 1), *f);
      StmtP inner = forall(in.id, *innerName, Nat(0), Nat(*f), body, s->forall, s->loc);
      return std::vector<StmtP>{forall(o.id, *outerName, Nat(0), outerLen, inner, s->forall, s->loc)};
    });
  }

  // ---- tiling through isl ---------------------------------------------------------------------

  void apply(const tir::Tile &c) {
    const Stmt *outer = loop(c, c.outer, 0);
    const Stmt *inner = loop(c, c.inner, 1);
    auto a = integer(c, c.outerSize, "the tile size of the outer loop");
    auto b = integer(c, c.innerSize, "the tile size of the inner loop");
    if (!outer || !inner || !a || !b) return;
    std::string what = "tile(" + outer->varName + ", " + inner->varName + ", " + std::to_string(*a) + ", " + std::to_string(*b) + ")";
    std::string outerName = outer->varName + "_tile", innerName = inner->varName + "_tile";
    for (std::string *n : {&outerName, &innerName})
      while (find(k_.body, *n)) *n += "_";
    std::string why;
    if (std::optional<StmtP> nest = perfectNest(*outer, *inner)) {
      // A perfect nest (after sinking): tiled when the band is permutable.
      StmtP saved = k_.body;
      k_.body = replace(k_.body, outer, [&](const StmtP &) { return std::vector<StmtP>{*nest}; });
      const Stmt *o = findVar(k_.body, outer->var), *i = findVar(k_.body, inner->var);
      PolyModel model;
      DependenceAnalysis deps;
      auto [lo, li] = modelLoops(o->var, i->var, model, deps);
      why = lo < 0 || li < 0 ? "the loops are not in the polyhedral model" : checkPermutableBand(model, deps, lo, li);
      if (!why.empty()) {
        k_.body = saved;
        return error(c.loc, what + ": tiles run in another order than the loops: " + why);
      }
      std::optional<StmtP> tiled = tileNest(*o, *i, *a, *b, outerName, innerName, why);
      if (!tiled) {
        k_.body = saved;
        return error(c.loc, what + ": " + why);
      }
      k_.body = replace(k_.body, o, [&](const StmtP &) { return std::vector<StmtP>{*tiled}; });
      return;
    }
    // Otherwise a row accumulator sits between the loops: every row's inner iterations keep
    // their order (tile by tile, then within the tile), so every dependence between iterations
    // of one outer index is kept; the outer loop must carry none.
    why = analysis(outer->var).verdict == LoopVerdict::Reduction
              ? "loop " + outer->varName + " accumulates into one value (a reduce)"
              : dependence(*outer);
    if (!why.empty()) return error(c.loc, what + ": tiles run in another order than the loops: " + why);
    // `acc = init; forall inner {... acc = f(acc, ...) ...}; T[x] = acc` (gemv's rows): the
    // accumulator becomes an array over the outer index (scalar expansion), which makes the
    // middle a perfect nest for isl to tile, between a loop that initialises and one that stores.
    std::optional<RowShape> shape = rowShapeOf(*inner);
    if (!shape || shape->row != outer || !shape->decl)
      return error(c.loc, what + ": loop " + inner->varName + " must be the only statement of loop " + outer->varName +
                              ", or sit between a row accumulator's declaration and its store");
    const Stmt &decl = *shape->decl, &store = *shape->store;
    if (!outer->lo.isZero()) return error(c.loc, what + ": the outer loop must start at 0 (its accumulators are an array indexed by it)");
    int64_t acc = decl.local;
    bool natUse = false;
    forEachStmt(inner->body[0], [&](const StmtP &st) {
      for (const ExprP &e : {st->value, st->lhs})
        if (anyExpr(e, [acc](const Expr &x) { return natMentions(x, acc); })) natUse = true;
      if (st->kind == StmtKind::Forall && (st->lo.mentions(acc) || st->hi.mentions(acc))) natUse = true;
    });
    if (natUse) return error(c.loc, what + ": the accumulator " + decl.localName + " is used as an index");
    TensorP accT = temporary(decl.localName + "_rows", types::array(outer->hi, types::scalar(decl.type)));
    k_.tensors.push_back(accT);
    Nat i = Nat::var(NatVarId{outer->var, outer->varName});
    ExprP cell = access(accT, {i}, {}, decl.type);
    // The middle nest: every use of the accumulator is its row's cell.
    std::function<ExprP(const ExprP &)> expand = [&](const ExprP &e) -> ExprP {
      if (!e) return e;
      if (e->kind == ExprKind::Local && e->local == acc) return cell;
      auto n = std::make_shared<Expr>(*e);
      for (ExprP &x : n->args) x = expand(x);
      return n;
    };
    std::function<StmtP(const StmtP &)> rewrite = [&](const StmtP &st) -> StmtP {
      if (!st) return st;
      auto n = std::make_shared<Stmt>(*st);
      if (st->kind == StmtKind::SetLocal && st->local == acc) {
        n->kind = StmtKind::Assign;
        n->lhs = cell;
      }
      n->value = expand(st->value);
      if (st->kind == StmtKind::Assign) n->lhs = expand(st->lhs);
      for (StmtP &x : n->body) x = rewrite(x);
      return n;
    };
    auto innerNest = std::make_shared<Stmt>(*inner);
    innerNest->body = {rewrite(inner->body[0])};
    innerNest->forall = ForallKind::Serial;  // its updates of the cells run in order
    auto outerNest = std::make_shared<Stmt>(*outer);
    outerNest->body = {innerNest};
    std::optional<StmtP> tiled = tileNest(*outerNest, *innerNest, *a, *b, outerName, innerName, why);
    if (!tiled) return error(c.loc, what + ": " + why);
    NatVarId r0 = freshNatVar(outer->varName), r1 = freshNatVar(outer->varName);
    NatSubst to0, to1;
    to0.vars.emplace(outer->var, Nat::var(r0));
    to1.vars.emplace(outer->var, Nat::var(r1));
    StmtP init = forall(r0.id, outer->varName, Nat(0), outer->hi,
                        assign(access(accT, {Nat::var(r0)}, {}, decl.type), substitute(decl.value, to0)), ForallKind::Parallel, outer->loc);
    StmtP out = forall(r1.id, outer->varName, Nat(0), outer->hi,
                       assign(substitute(store.lhs, to1), access(accT, {Nat::var(r1)}, {}, decl.type)), ForallKind::Parallel, outer->loc);
    StmtP whole = allocTemp(accT, block({init, *tiled, out}));
    k_.body = replace(k_.body, outer, [&](const StmtP &) { return std::vector<StmtP>{whole}; });
  }

  // ---- position split ---------------------------------------------------------------------------

  /// The nest of `outer` and `inner` as a perfect nest: `inner` is outer's only statement, or
  /// follows declarations `x = e` that move into inner's body (recomputed per inner
  /// iteration: a CSR column index `t = A[i, p].1` before SpMM's dense loop). A declaration
  /// moves when its value reads no local of the nest but the declarations before it and no
  /// tensor the nest writes, and neither inner's bounds nor another statement reassign or
  /// bound on it. nullopt when the nest is not of that form.
  std::optional<StmtP> perfectNest(const Stmt &outer, const Stmt &inner) {
    const StmtP &ob = outer.body[0];
    if (ob.get() == &inner) return std::make_shared<Stmt>(outer);
    if (ob->kind != StmtKind::Block || ob->body.empty() || ob->body.back().get() != &inner) return std::nullopt;
    std::vector<StmtP> decls(ob->body.begin(), ob->body.end() - 1);
    std::set<int64_t> written, declared;
    std::set<int64_t> nestLocals;
    forEachStmt(ob, [&](const StmtP &s) {
      if (s->kind == StmtKind::Assign && s->lhs && s->lhs->kind == ExprKind::Access) written.insert(s->lhs->tensor->id);
      if (s->kind == StmtKind::DeclLocal || s->kind == StmtKind::SetLocal) nestLocals.insert(s->local);
    });
    for (const StmtP &d : decls) {
      if (d->kind != StmtKind::DeclLocal || !d->value) return std::nullopt;
      for (int64_t l : nestLocals)
        if (!declared.count(l) && readsLocal(d->value, l)) return std::nullopt;
      for (int64_t t : written)
        if (readsTensor(d->value, t)) return std::nullopt;
      if (inner.lo.mentions(d->local) || inner.hi.mentions(d->local)) return std::nullopt;
      bool reassigned = false;
      forEachStmt(inner.body[0], [&](const StmtP &s) {
        reassigned = reassigned || (s->kind == StmtKind::SetLocal && s->local == d->local);
      });
      if (reassigned) return std::nullopt;
      declared.insert(d->local);
    }
    auto in = std::make_shared<Stmt>(inner);
    decls.push_back(inner.body[0]);
    in->body = {block(decls)};
    auto out = std::make_shared<Stmt>(outer);
    out->body = {in};
    return out;
  }

  /// The loop directly inside a row loop's body (alone, or between its accumulator's
  /// declaration and store), with the statements around it.
  struct RowShape {
    const Stmt *row = nullptr;
    StmtP decl, store;  // the accumulator pattern, or null
  };

  std::optional<RowShape> rowShapeOf(const Stmt &k) {
    RowShape shape;
    forEachStmt(k_.body, [&](const StmtP &s) {
      if (s->kind != StmtKind::Forall || shape.row) return;
      const StmtP &b = s->body[0];
      if (b.get() == &k) {
        shape.row = s.get();
        return;
      }
      if (b->kind != StmtKind::Block) return;
      const std::vector<StmtP> &ss = b->body;
      if (ss.size() == 1 && ss[0].get() == &k) shape.row = s.get();
      if (ss.size() == 3 && ss[1].get() == &k && storesAccumulator(*ss[0], *ss[2])) {
        shape.row = s.get();
        shape.decl = ss[0];
        shape.store = ss[2];
      }
    });
    if (!shape.row) return std::nullopt;
    return shape;
  }

  void apply(const tir::Pos &c) {
    const Stmt *k = loop(c, c.loop, 0);
    auto chunkName = newName(c, c.chunk, 1);
    auto f = integer(c, c.size, "the chunk size (nonzeros per chunk)");
    if (!k || !chunkName || !f) return;
    std::string what = "pos(" + k->varName + ", " + *chunkName + ", " + std::to_string(*f) + ")";
    std::optional<RowShape> shape = rowShapeOf(*k);
    if (!shape) return error(c.loc, what + ": loop " + k->varName + " must be the body of a row loop (alone, or between a row accumulator's declaration and its store)");
    const Stmt &row = *shape->row;
    // k iterates the positions of row i of a compressed level: [0, offs@(i+1) - offs@i).
    int64_t offsId = compressedRowOffsets(*k, row.var);
    if (!offsId || !row.lo.isZero())
      return error(c.loc, what + ": loop " + k->varName + " does not run over the positions of a compressed row: its bounds are [" +
                              k->lo.str() + ", " + k->hi.str() + "), not [0, offs@(" + row.varName + " + 1) - offs@" + row.varName + ")");
    TensorP offs;
    for (const TensorP &t : k_.tensors)
      if (t->id == offsId) offs = t;
    if (!offs) return error(c.loc, what + ": the offsets of loop " + k->varName + " are not an array of this kernel");
    // The row accumulator, when there is one: its update operator decides how chunks combine.
    ExprP target;
    StmtP initAll;
    ExprP identity;
    bool isMinMax = false, isMax = false;
    if (shape->decl) {
      const Stmt &decl = *shape->decl, &store = *shape->store;
      bool opFound = false, opOk = true;
      forEachStmt(k->body[0], [&](const StmtP &s) {
        if (s->kind != StmtKind::SetLocal || s->local != decl.local) return;
        const ExprP &v = s->value;
        bool add = v->kind == ExprKind::Binary && v->binop == ast::BinOp::Add;
        bool mm = v->kind == ExprKind::MinMax;
        if (!add && !mm) opOk = false;
        if (opFound && (mm != isMinMax || (mm && v->isMax != isMax))) opOk = false;
        opFound = true;
        isMinMax = mm;
        isMax = v->isMax;
      });
      if (!opFound || !opOk)
        return error(c.loc, what + ": the row accumulator " + decl.localName + " is not updated with one of +, min or max, so the partial rows of two chunks cannot be combined");
      target = store.lhs;
      // Every row starts at the accumulator's initial value; chunks then combine into it.
      NatVarId r = freshNatVar(row.varName);
      NatSubst toR;
      toR.vars.emplace(row.var, Nat::var(r));
      initAll = forall(r.id, row.varName, Nat(0), row.hi, assign(substitute(target, toR), decl.value), ForallKind::Parallel, row.loc);
      identity = isMinMax ? decl.value : (isFloat(decl.type) ? constFloat(0, decl.type) : constInt(0, decl.type));
    }
    Nat i = Nat::var(NatVarId{row.var, row.varName});
    const NatVarId offsVar{offsId, offs->name};
    Nat base = Nat::lookup(offsVar, Nat(0));
    Nat nnz = Nat::lookup(offsVar, row.hi) - base;
    NatVarId chunk = freshNatVar(*chunkName);
    Nat first = Nat::var(chunk) * Nat(*f);
    Nat last = Nat::min(first + Nat(*f), nnz);  // one past the chunk's last position
    std::vector<StmtP> chunkBody;
    // The row holding position `p`: the largest r in [0, rows) with offs@r - offs@0 <= p, by
    // bisection (64 halvings cover any row count).
    auto rowOf = [&](const Nat &p, const std::string &name) {
      NatVarId lo = freshNatVar(name + "_lo"), hi = freshNatVar(name + "_hi"), step = freshNatVar("s"), mid = freshNatVar("mid");
      ExprP loE = local(lo.id, Scalar::I64), hiE = local(hi.id, Scalar::I64);
      chunkBody.push_back(declLocal(lo.id, name + "_lo", Scalar::I64, constInt(0)));
      chunkBody.push_back(declLocal(hi.id, name + "_hi", Scalar::I64, natExpr(row.hi)));
      ExprP midAt = natExpr(Nat::lookup(offsVar, Nat::value(mid)) - base);
      StmtP halve = block({declLocal(mid.id, "mid", Scalar::I64, binary(ast::BinOp::Div, binary(ast::BinOp::Add, loE, hiE, Scalar::I64), constInt(2), Scalar::I64)),
                           ifThen(binary(ast::BinOp::Le, midAt, natExpr(p), Scalar::Bool), setLocal(lo.id, local(mid.id, Scalar::I64), Scalar::I64),
                                  setLocal(hi.id, local(mid.id, Scalar::I64), Scalar::I64))});
      ExprP wide = binary(ast::BinOp::Gt, binary(ast::BinOp::Sub, hiE, loE, Scalar::I64), constInt(1), Scalar::Bool);
      chunkBody.push_back(forall(step.id, "s", Nat(0), Nat(64), ifThen(wide, halve), ForallKind::Serial, row.loc));
      return loE;
    };
    NatVarId r0 = freshNatVar(row.varName + "_first"), r1 = freshNatVar(row.varName + "_end");
    ExprP firstRow = rowOf(first, row.varName + "_first");
    chunkBody.push_back(declLocal(r0.id, r0.name, Scalar::I64, firstRow));
    ExprP lastRow = rowOf(last - Nat(1), row.varName + "_end");
    chunkBody.push_back(declLocal(r1.id, r1.name, Scalar::I64, binary(ast::BinOp::Add, lastRow, constInt(1), Scalar::I64)));
    // The rows of the chunk, each over its positions inside [first, last).
    Nat rowStart = Nat::lookup(offsVar, i), rowEnd = Nat::lookup(offsVar, i + Nat(1));
    auto kNew = std::make_shared<Stmt>(*k);
    kNew->lo = Nat::max(first + base, rowStart) - rowStart;
    kNew->hi = Nat::min(last + base, rowEnd) - rowStart;
    if (kNew->segment) kNew->segment->whole = false;  // a chunk's part of the row
    StmtP rowBody;
    if (shape->decl) {
      auto decl = std::make_shared<Stmt>(*shape->decl);
      decl->value = identity;
      ExprP acc = local(decl->local, decl->type);
      ExprP combined = isMinMax ? minmax(isMax, target, acc, decl->type) : binary(ast::BinOp::Add, target, acc, decl->type);
      rowBody = block({decl, kNew, assign(target, combined)});
    } else {
      rowBody = kNew;
    }
    chunkBody.push_back(forall(row.var, row.varName, Nat::value(r0), Nat::value(r1), rowBody, ForallKind::Serial, row.loc));
    StmtP chunks = forall(chunk.id, *chunkName, Nat(0), Nat::div(nnz + Nat(*f - 1), *f), block(chunkBody), ForallKind::Serial, row.loc);
    k_.body = replace(k_.body, &row, [&](const StmtP &) {
      std::vector<StmtP> out;
      if (initAll) out.push_back(initAll);
      out.push_back(chunks);
      return out;
    });
  }

  void apply(const tir::Reorder &c) {
    const Stmt *outer = loop(c, c.outer, 0);
    const Stmt *innerTarget = loop(c, c.inner, 1);
    if (!outer || !innerTarget) return;
    // Of loops of one name (the copies a fuse's split makes, such as a peeled first row's), the
    // one inside the outer loop.
    auto innerOf = [&](const Stmt *o) {
      const Stmt *inside = find(o->body[0], c.inner.text);
      return inside ? inside : find(k_.body, c.inner.text);
    };
    innerTarget = innerOf(outer);
    std::string pair = "reorder(" + outer->varName + ", " + innerTarget->varName + ")";
    if (StmtP folded = guardAsBound(*outer)) {
      // split's guard `i0 f + i1 < n` around the body: the inner loop's bound instead.
      k_.body = replace(k_.body, outer, [&](const StmtP &) { return std::vector<StmtP>{folded}; });
      outer = find(k_.body, c.outer.text);
      innerTarget = innerOf(outer);
    }
    if (StmtP shifted = shiftToPositions(*innerTarget, Nat::var(NatVarId{outer->var, outer->varName}), outer->var)) {
      // The rest of a row after i (k in [0, n - i - 1) reading k + i + 1) as k in [i + 1, n)
      // reading k, a band's row (t in [0, max(hi - lo, 0)) reading lo + t) as [lo, hi):
      // interchanged, the loops then walk the triangle's or band's rows and columns, not its
      // diagonals.
      k_.body = replace(k_.body, innerTarget, [&](const StmtP &) { return std::vector<StmtP>{shifted}; });
      outer = find(k_.body, c.outer.text);
      innerTarget = innerOf(outer);
    }
    const StmtP &ob = outer->body[0];
    const Stmt *direct = ob->kind == StmtKind::Forall ? ob.get()
                         : ob->kind == StmtKind::Block && ob->body.size() == 1 && ob->body[0]->kind == StmtKind::Forall ? ob->body[0].get()
                                                                                                                      : nullptr;
    std::string why;
    if (direct != innerTarget) {
      // Statements around the inner loop (a reduction's accumulator and its store, or the
      // accumulator array an earlier reorder made): the outer loop is distributed around
      // them, its private values expanded into arrays over it (poly/Distribute.h). Legal when
      // the outer loop carries no dependence.
      bool inBody = false;
      forEachStmt(ob, [&](const StmtP &s) { inBody = inBody || s.get() == innerTarget; });
      if (!inBody)
        return error(c.loc, pair + ": the loops are not nested (" + innerTarget->varName + " is not inside " + outer->varName + ")");
      why = dependence(*outer);
      if (!why.empty()) {
        std::string whyNotSplit;
        if (reorderPastDiagonalBlock(*outer, *innerTarget, whyNotSplit)) return;
        return error(c.loc, pair + ": the statements around " + innerTarget->varName + " cannot run for every " +
                                outer->varName + " first: " + why + (whyNotSplit.empty() ? "" : " (" + whyNotSplit + ")"));
      }
      std::vector<TensorP> added;
      std::string before = outer->varName + "_before", after = outer->varName + "_after";
      for (std::string *n : {&before, &after})
        while (find(k_.body, *n)) *n += "_";
      std::optional<StmtP> moved = distributeInterchange(*outer, *innerTarget, before, after, added, why);
      if (!moved)
        return error(c.loc, pair + ": the loops are not perfectly nested, and " + outer->varName + " cannot move inside " +
                                innerTarget->varName + ": " + why);
      k_.tensors.insert(k_.tensors.end(), added.begin(), added.end());
      k_.body = replace(k_.body, outer, [&](const StmtP &) { return spliced(*moved); });
      return;
    }
    // A perfect nest: exchanged when both loops are independent, or when the band is
    // permutable (every dependence keeps its direction in both loops: an update of one
    // element per (i, j) carried by the outer loop, blocked gemm's k).
    std::string dOuter = dependence(*outer), dInner = dependence(*innerTarget);
    if (!dOuter.empty() || !dInner.empty()) {
      PolyModel model;
      DependenceAnalysis deps;
      auto [lo, li] = modelLoops(outer->var, innerTarget->var, model, deps);
      std::string band = lo < 0 || li < 0 ? "the loops are not in the polyhedral model" : checkPermutableBand(model, deps, lo, li);
      if (!band.empty()) return error(c.loc, pair + ": " + (dOuter.empty() ? dInner : dOuter) + " (" + band + ")");
    }
    // Through isl: the band S[i, j] -> [j, i] and its AST, which also exchanges the bounds of a
    // triangle (j <= i: j in [0, n), i in [j, n)).
    std::optional<StmtP> exchanged = interchangeNest(*outer, *innerTarget, why);
    if (!exchanged)
      return error(c.loc, pair + ": the bounds of " + innerTarget->varName + " [" + innerTarget->lo.str() + ", " +
                              innerTarget->hi.str() + ") depend on " + outer->varName + " other than affinely (" + why + ")");
    k_.body = replace(k_.body, outer, [&](const StmtP &) { return std::vector<StmtP>{*exchanged}; });
  }

  /// reorder(ki, i) where ki carries a dependence only through the rows of its own block: ki
  /// the point loop of a split (a constant bound f among its bound's arms), i a loop in its
  /// body over a triangle's part of a row or column: [lo, hi) with one bound increasing in ki
  /// (a ki + e, a > 0) and the other free of ki. With lo moving (the rows below a column's
  /// diagonal) i splits at P = lo at ki = f - 1, where the block's last column starts its rows:
  /// [lo, min(hi, P)) inside the block, then [P, hi) past it. With hi moving (the columns
  /// left of a row's diagonal) at P = hi at ki = 0: [lo, P) before the block, then
  /// [max(lo, P), hi) inside it. The part inside the block stays where it was (a loop
  /// `i_diag`, in ki's order); the part outside it, whose bounds no longer depend on ki, is
  /// interchanged with ki by the distribution of a reorder. Legal when no dependence ki
  /// carries goes from a later part of its body to an earlier one and the interchanged rows
  /// keep their dependences' directions (poly/Dependences.h). This is how a fused symmetric
  /// product takes several columns at once: column k's rows inside its block of columns
  /// update sums that the block's later columns read first; the rows below the block do not.
  /// On failure the kernel is left as it was, with the reason in `why`.
  bool reorderPastDiagonalBlock(const Stmt &outer, const Stmt &inner, std::string &why) {
    std::optional<std::vector<Nat>> arms = minArms(outer.hi);
    std::optional<int64_t> f;
    for (const Nat &arm : arms.value_or(std::vector<Nat>{outer.hi}))
      if (std::optional<int64_t> v = arm.asConst()) f = f ? std::min(*f, *v) : *v;
    // Which bound moves with ki: the lower one (the rows below a column's diagonal, the block's
    // rows first) or the upper one (the columns left of a row's diagonal, the block's last).
    const bool lower = inner.lo.mentions(outer.var);
    const Nat &moving = lower ? inner.lo : inner.hi;
    if (!f || *f < 2 || outer.lo.asConst() != std::optional<int64_t>(0) || lower == inner.hi.mentions(outer.var)) return false;
    Nat ki = Nat::var(NatVarId{outer.var, outer.varName});
    NatSubst next, at;
    next.vars.emplace(outer.var, ki + Nat(1));
    at.vars.emplace(outer.var, Nat(lower ? *f - 1 : 0));
    std::optional<int64_t> slope = (substitute(moving, next) - moving).asConst();
    if (!slope || *slope <= 0 || (moving - Nat(*slope) * ki).mentions(outer.var)) return false;
    // Where the block's rows end (lower: where its last column's rows start) or begin (upper:
    // where its first row's columns end).
    const Nat cut = substitute(moving, at);
    const StmtP saved = k_.body;
    // The rows inside the block, under a variable of their own, and the rows outside it.
    NatVarId diagVar = freshNatVar(inner.varName + "_diag");
    std::string diagName = inner.varName + "_diag";
    while (find(k_.body, diagName)) diagName += "_";
    NatSubst rename;
    rename.vars.emplace(inner.var, Nat::var(diagVar));
    auto diag = std::make_shared<Stmt>(inner), past = std::make_shared<Stmt>(inner);
    diag->var = diagVar.id;
    diag->varName = diagName;
    diag->body = {substitute(inner.body[0], rename)};
    if (lower) {
      diag->hi = Nat::min(inner.hi, cut);
      past->lo = cut;
    } else {
      diag->lo = Nat::max(inner.lo, cut);
      past->hi = cut;
    }
    const std::vector<StmtP> parts = lower ? std::vector<StmtP>{diag, past} : std::vector<StmtP>{past, diag};
    k_.body = replace(k_.body, &inner, [&](const StmtP &) { return parts; });
    // The distribution takes the rows past the block as a statement of ki's body: blocks
    // nested there (a fuse's) are flattened into it (a block opens no scope).
    if (const Stmt *l = find(k_.body, outer.varName); l && l->body[0]->kind == StmtKind::Block) {
      std::vector<StmtP> flat;
      std::function<void(const StmtP &)> add = [&](const StmtP &x) {
        if (x->kind != StmtKind::Block) return flat.push_back(x);
        for (const StmtP &y : x->body) add(y);
      };
      add(l->body[0]);
      if (flat.size() != l->body[0]->body.size()) {
        auto flattened = std::make_shared<Stmt>(*l);
        flattened->body = {block(flat)};
        k_.body = replace(k_.body, l, [&](const StmtP &) { return std::vector<StmtP>{flattened}; });
      }
    }
    auto fail = [&](const std::string &reason) {
      k_.body = saved;
      why = "nor past the diagonal block: " + reason;
      return false;
    };
    // The point loop, then the rows loop inside it (a fuse's peeled copy of a loop keeps its
    // variable: only the one inside counts).
    const Stmt *o = findForall(k_.body, [&](const Stmt &x) { return x.var == outer.var; });
    const Stmt *rows = o ? findForall(o->body[0], [&](const Stmt &x) { return x.var == inner.var; }) : nullptr;
    if (!o || !rows) return fail("the split loops were not found");
    PolyModel model;
    DependenceAnalysis deps;
    auto [lo, li] = modelLoops(outer.var, inner.var, model, deps);
    if (lo < 0 || li < 0) return fail("the loops are not in the polyhedral model");
    const std::vector<int> &inRows = model.loops[static_cast<size_t>(li)].statements;
    if (inRows.empty()) return fail("the rows past the block hold no statement");
    std::set<int> rowSet(inRows.begin(), inRows.end());
    const int firstRow = *std::min_element(inRows.begin(), inRows.end());
    std::map<int, int> partOf;
    for (int s : model.loops[static_cast<size_t>(lo)].statements) partOf[s] = rowSet.count(s) ? 1 : s < firstRow ? 0 : 2;
    if (std::string broken = checkDistribution(model, deps, lo, partOf); !broken.empty()) return fail(broken);
    if (std::string band = checkPermutableBand(model, deps, lo, li); !band.empty()) return fail(band);
    std::vector<TensorP> added;
    std::string before = outer.varName + "_before", after = outer.varName + "_after", whyNot;
    for (std::string *n : {&before, &after})
      while (find(k_.body, *n)) *n += "_";
    std::optional<StmtP> moved = distributeInterchange(*o, *rows, before, after, added, whyNot);
    if (!moved) return fail(whyNot);
    k_.tensors.insert(k_.tensors.end(), added.begin(), added.end());
    k_.body = replace(k_.body, o, [&](const StmtP &) { return spliced(*moved); });
    return true;
  }

  /// `forall i [lo, hi) { if (i + r < y) { body } }` (split's guard, r and y free of i) as
  /// `forall i [lo, min(hi, y - r)) { body }`, or null when the loop is not of that form.
  static StmtP guardAsBound(const Stmt &l) {
    StmtP g = l.body[0];
    if (g->kind == StmtKind::Block && g->body.size() == 1) g = g->body[0];
    if (g->kind != StmtKind::If || (g->body.size() > 1 && g->body[1])) return nullptr;
    const ExprP &c = g->value;
    if (!c || c->kind != ExprKind::Binary || c->binop != ast::BinOp::Lt) return nullptr;
    auto natOf = [](const ExprP &e) -> std::optional<Nat> {
      if (e->kind == ExprKind::NatE) return e->nat;
      if (e->kind == ExprKind::Const && !isFloat(e->type)) return Nat(e->ival);
      return std::nullopt;
    };
    std::optional<Nat> x = natOf(c->args[0]), y = natOf(c->args[1]);
    if (!x || !y || y->mentions(l.var)) return nullptr;
    Nat r = *x - Nat::var(NatVarId{l.var, l.varName});
    if (r.mentions(l.var)) return nullptr;
    auto n = std::make_shared<Stmt>(l);
    n->hi = Nat::min(l.hi, *y - r);
    n->body = {g->body[0]};
    return n;
  }

  /// The nearest loop around `target` in `s`, or null.
  static const Stmt *loopAround(const StmtP &s, const Stmt *target, const Stmt *around = nullptr) {
    if (!s) return nullptr;
    if (s.get() == target) return around;
    const Stmt *next = s->kind == StmtKind::Forall ? s.get() : around;
    for (const StmtP &b : s->body)
      if (const Stmt *found = loopAround(b, target, next)) return found;
    return nullptr;
  }

  /// distribute(i, j): loop i over its statements before j, then over j, then over those after
  /// (poly/Distribute.h), its private values expanded into arrays over i. Legal when no
  /// dependence i carries goes from a later part to an earlier one (checkDistribution): a
  /// fused symv's finishing of its rows reads sums that only earlier iterations add to.
  void apply(const tir::Distribute &c) {
    const Stmt *outer = loop(c, c.loop, 0);
    if (!outer || !loop(c, c.at, 1)) return;
    // Of loops of one name, the one inside the outer loop.
    const Stmt *at = find(outer->body[0], c.at.text);
    std::string what = "distribute(" + outer->varName + ", " + c.at.text + ")";
    if (!at) return error(c.loc, what + ": " + c.at.text + " is not inside " + outer->varName);
    PolyModel model;
    DependenceAnalysis deps;
    auto [lo, li] = modelLoops(outer->var, at->var, model, deps);
    if (lo < 0 || li < 0) return error(c.loc, what + ": the loops are not in the polyhedral model");
    const std::vector<int> &inAt = model.loops[static_cast<size_t>(li)].statements;
    if (inAt.empty()) return error(c.loc, what + ": " + at->varName + " holds no statement");
    // Statements are numbered in program order: before j, in j, after it.
    std::set<int> atSet(inAt.begin(), inAt.end());
    const int first = *std::min_element(inAt.begin(), inAt.end());
    std::map<int, int> partOf;
    for (int st : model.loops[static_cast<size_t>(lo)].statements) partOf[st] = atSet.count(st) ? 1 : st < first ? 0 : 2;
    if (std::string broken = checkDistribution(model, deps, lo, partOf); !broken.empty())
      return error(c.loc, what + ": " + broken);
    std::vector<TensorP> added;
    std::string before = outer->varName + "_before", after = outer->varName + "_after", why;
    for (std::string *n : {&before, &after})
      while (find(k_.body, *n)) *n += "_";
    std::optional<StmtP> parts = distributeLoop(*outer, *at, before, after, added, why);
    if (!parts) return error(c.loc, what + ": " + why);
    k_.tensors.insert(k_.tensors.end(), added.begin(), added.end());
    k_.body = replace(k_.body, outer, [&](const StmtP &) { return spliced(*parts); });
  }

  /// fuse(a, b): through isl (poly/Fuse.h). The loops are statements of one block, a first;
  /// the statements between them move before a; the bounds may differ (isl splits off the range
  /// where only one body runs), except that a loop whose first few iterations do nothing (its
  /// body's loops empty there) first starts where the other does (startWithTheOther), so that
  /// no copy of the other's first iterations is peeled. Legal when no dependence forbids that
  /// order (checkFusion).
  void apply(const tir::Fuse &c) {
    const Stmt *a = loop(c, c.first, 0);
    const Stmt *b = loop(c, c.second, 1);
    if (!a || !b) return;
    // A loop over the rest of a row after the index of the loop around it (k in [0, n - i - 1)
    // reading k + i + 1) or over a band's row is first shifted to the row's positions (k in
    // [i + 1, n) reading k), so that fused iterations read the same positions, not positions i
    // apart. Every loop of the name is shifted (a first iteration that an earlier fuse peeled
    // keeps a copy of the loop, with no loop around it).
    for (const tir::NameArg *ref : {&c.first, &c.second}) {
      std::vector<const Stmt *> named;
      forEachStmt(k_.body, [&](const StmtP &x) {
        if (x->kind == StmtKind::Forall && x->varName == ref->text) named.push_back(x.get());
      });
      for (const Stmt *l : named) {
        const Stmt *around = loopAround(k_.body, l);
        if (!around) continue;
        if (StmtP shifted = shiftToPositions(*l, Nat::var(NatVarId{around->var, around->varName}), around->var))
          k_.body = replace(k_.body, l, [&](const StmtP &) { return std::vector<StmtP>{shifted}; });
      }
    }
    a = find(k_.body, c.first.text);
    b = find(k_.body, c.second.text);
    std::string pair = "fuse(" + a->varName + ", " + b->varName + ")";
    // The first block holding loops of these names, a's first (of loops of one name, such as
    // the copy of a peeled first row a fuse's split makes, the pair that are siblings).
    const Stmt *parent = nullptr;
    size_t ia = 0, ib = 0;
    auto named = [](const StmtP &s, const std::string &name) { return s && s->kind == StmtKind::Forall && s->varName == name; };
    auto siblings = [&] {
      parent = nullptr;
      forEachStmt(k_.body, [&](const StmtP &s) {
        if (parent || s->kind != StmtKind::Block) return;
        for (size_t i = 0; i < s->body.size() && !parent; ++i)
          for (size_t j = i + 1; j < s->body.size() && !parent; ++j)
            if (named(s->body[i], c.first.text) && named(s->body[j], c.second.text)) {
              parent = s.get();
              ia = i;
              ib = j;
            }
      });
      if (parent) {
        a = parent->body[ia].get();
        b = parent->body[ib].get();
      }
    };
    siblings();
    if (!parent) return error(c.loc, pair + ": the loops must be statements of one block, " + a->varName + " first");
    // A loop whose first iterations do nothing starts where the other does (isl would run
    // those of the other alone, a peeled copy), so that the fused loop's range starts at the
    // other's start and a later split's blocks at multiples of the block from it: dsymv U's
    // column parts run from row 1 (row 0 has no rows above it), and the blocks of rows 1 to 4,
    // 5 to 8, ... left each block's dot products one element past whole vectors (a C kernel of
    // that shape ran 1.10x slower than one over rows 0 to 3, 4 to 7, ... on a Zen 3).
    if (StmtP widened = startWithTheOther(*a, *b); widened || (widened = startWithTheOther(*b, *a))) {
      k_.body = replace(k_.body, widened->var == a->var ? a : b, [&](const StmtP &) { return std::vector<StmtP>{widened}; });
      siblings();
      if (!parent) return error(c.loc, pair + ": the loops must be statements of one block, " + a->varName + " first");
    }
    for (size_t k = ia + 1; k < ib; ++k)
      if (parent->body[k] && parent->body[k]->kind == StmtKind::Barrier)
        return error(c.loc, pair + ": a barrier separates the loops");
    // Legality on the kernel as it stands.
    PolyModel model;
    DependenceAnalysis deps;
    auto [la, lb] = modelLoops(a->var, b->var, model, deps);
    if (la < 0 || lb < 0) return error(c.loc, pair + ": the loops are not in the polyhedral model");
    const std::vector<int> &sa = model.loops[la].statements, &sb = model.loops[lb].statements;
    if (sa.empty() || sb.empty()) return error(c.loc, pair + ": a loop without statements has nothing to fuse");
    std::vector<int> between;  // statements are numbered in program order
    for (int st = sa.back() + 1; st < sb.front(); ++st) between.push_back(st);
    FusionCheck check = checkFusion(model, deps, la, lb, between);
    if (!check.conflict.empty()) return error(c.loc, pair + ": " + check.conflict);
    // The fused loop's kind: the loops' common kind, unless it now carries a dependence.
    ForallKind kind = a->forall == b->forall && !check.carried ? a->forall : ForallKind::Serial;
    bool gpu = a->forall >= ForallKind::GpuBlock || b->forall >= ForallKind::GpuBlock;
    if (gpu && kind == ForallKind::Serial)
      return error(c.loc, pair + ": the fused loop would run in order (" +
                              std::string(check.carried ? "b's iterations read what later iterations of a produce"
                                                        : "the loops are mapped differently") +
                              "), which a GPU mapping cannot");
    std::string why;
    std::optional<StmtP> fused = fuseLoops(*a, *b, kind, why);
    if (!fused) return error(c.loc, pair + ": " + why);
    // The loop hints both loops agree on stay; the loop is the user's now.
    std::function<StmtP(const StmtP &)> hints = [&](const StmtP &s) -> StmtP {
      if (!s) return s;
      auto n = std::make_shared<Stmt>(*s);
      if (s->kind == StmtKind::Forall) {
        n->userKind = true;
        n->balanceBy = a->balanceBy == b->balanceBy && kind == a->forall ? a->balanceBy : 0;
        n->vectorize = a->vectorize && b->vectorize;
        n->vectorBits = a->vectorBits == b->vectorBits ? a->vectorBits : 0;
        n->unroll = a->unroll == b->unroll ? a->unroll : 0;
        n->vectorWidth = a->vectorWidth == b->vectorWidth ? a->vectorWidth : 0;
        n->interleave = a->interleave == b->interleave ? a->interleave : 0;
        n->maskedTail = a->maskedTail && b->maskedTail;
        n->gatherAhead = a->gatherAhead == b->gatherAhead ? a->gatherAhead : 0;
        n->rows = a->rows == b->rows ? a->rows : ast::GpuRowMapping::Auto;
        n->knobs = a->rows == b->rows ? a->knobs.common(b->knobs) : ast::GpuRowKnobs{};
        return n;  // the bodies keep their own loops' hints
      }
      for (StmtP &x : n->body) x = hints(x);
      return n;
    };
    StmtP result = hints(*fused);
    StmtP saved = k_.body;
    k_.body = replace(k_.body, parent, [&](const StmtP &s) {
      auto n = std::make_shared<Stmt>(*s);
      std::vector<StmtP> body(s->body.begin(), s->body.begin() + static_cast<long>(ia));
      body.insert(body.end(), s->body.begin() + static_cast<long>(ia) + 1, s->body.begin() + static_cast<long>(ib));
      body.push_back(result);
      body.insert(body.end(), s->body.begin() + static_cast<long>(ib) + 1, s->body.end());
      n->body = body;
      return std::vector<StmtP>{n};
    });
    // The check above keeps every dependence; the fused loop's own verdict decides whether
    // its kind still holds (e.g. two parallel loops whose fusion carries a reduction).
    if (kind != ForallKind::Serial) {
      std::string carried = dependence(*findVar(k_.body, a->var), /*reductionOk=*/kind == ForallKind::Reduction);
      if (!carried.empty()) {
        k_.body = saved;
        return error(c.loc, pair + ": after fusion, " + carried);
      }
    }
  }

  /// `late` with its range starting at `early`'s start, where both start at constants, `late`
  /// a few iterations after, and `late`'s body does nothing in those: each of its statements
  /// a loop whose range is then empty. Null otherwise.
  static StmtP startWithTheOther(const Stmt &early, const Stmt &late) {
    constexpr int64_t kMostIterationsAdded = 8;
    std::optional<int64_t> from = early.lo.asConst(), to = late.lo.asConst();
    if (!from || !to || *from >= *to || *to - *from > kMostIterationsAdded || late.body.size() != 1 || !late.body[0])
      return nullptr;
    const std::vector<StmtP> stmts = late.body[0]->kind == StmtKind::Block ? late.body[0]->body : late.body;
    if (stmts.empty()) return nullptr;
    for (int64_t at = *from; at < *to; ++at) {
      NatSubst there;
      there.vars.emplace(late.var, Nat(at));
      for (const StmtP &s : stmts) {
        if (!s || s->kind != StmtKind::Forall) return nullptr;
        std::optional<int64_t> trips = (substitute(s->hi, there) - substitute(s->lo, there)).asConst();
        if (!trips || *trips > 0) return nullptr;
      }
    }
    auto widened = std::make_shared<Stmt>(late);
    widened->lo = early.lo;
    return widened;
  }

  const Stmt *findVar(const StmtP &s, int64_t var) const {
    return findForall(s, [&](const Stmt &x) { return x.var == var; });
  }

  void apply(const tir::Parallelize &c) {
    using Kind = tir::Parallelize::Kind;
    using Races = tir::Parallelize::Races;
    const Stmt *l = loop(c, c.loop, 0);
    if (!l) return;
    const std::string &kind = c.kindText, &race = c.racesText;
    if (c.races == Races::Unknown)
      return error(c.racesLoc, "parallelize: unknown race strategy '" + race + "' (no_races, atomics, privatize, ignore_races)");
    ForallKind fk = ForallKind::Parallel;
    const bool gpu = c.isGpu();
    switch (c.kind) {
      case Kind::CpuThreads: fk = ForallKind::Parallel; break;
      case Kind::Serial: fk = ForallKind::Serial; break;
      case Kind::Simd: fk = ForallKind::Vector; break;
      case Kind::GpuBlock: fk = ForallKind::GpuBlock; break;
      case Kind::GpuThread: fk = ForallKind::GpuThread; break;
      case Kind::GpuWarp: fk = ForallKind::GpuWarp; break;
      case Kind::GpuLane: fk = ForallKind::GpuLane; break;
      case Kind::GpuGlobal: fk = ForallKind::GpuGlobal; break;
      case Kind::Unknown:
        return error(c.loc, "parallelize: unknown kind '" + kind + "' (cpu_threads, serial, simd, gpu_block, gpu_warp, gpu_thread, gpu_lane, gpu_global)");
    }
    if (gpu != k_.cuda)
      return error(c.loc, "parallelize(" + l->varName + ", " + kind + "): " + (gpu ? "a GPU level in a cpu schedule" : "a CPU level in a cuda schedule"));
    std::string what = "parallelize(" + l->varName + ", " + kind + (c.races == Races::NoRaces ? "" : ", " + race) + ")";
    if (fk != ForallKind::Serial && c.races == Races::Privatize) {
      if (fk != ForallKind::Parallel) return error(c.racesLoc, what + ": privatize runs a loop's parts on CPU threads (cpu_threads)");
      std::string part;
      if (!privatize(c, *l, what, part)) return;
      if (!part.empty()) l = find(k_.body, part);
      if (!l) return error(c.loc, what + ": the loop was lost dividing it into parts");
    } else if (fk != ForallKind::Serial && c.races == Races::Atomics) {
      // makeAtomic rebuilds the tree: `l` may be freed, so keep what names it.
      int64_t var = l->var;
      std::string name = l->varName;
      if (!makeAtomic(c, *l, what)) return;
      l = find(k_.body, name);
      if (!l || l->var != var) return error(c.loc, what + ": the loop was lost rewriting its updates");
    } else if (fk != ForallKind::Serial && c.races == Races::NoRaces) {
      std::string why = dependence(*l);
      if (!why.empty()) return error(c.loc, what + ": " + why);
    }
    k_.body = replace(k_.body, l, [&](const StmtP &s) {
      auto n = std::make_shared<Stmt>(*s);
      n->forall = fk == ForallKind::Vector ? ForallKind::Serial : fk;
      n->vectorize = fk == ForallKind::Vector;
      n->userKind = true;
      return std::vector<StmtP>{n};
    });
  }

  // ---- the privatize race strategy -------------------------------------------------------------

  /// Loop `l` as parts that update private copies of the arrays whose updates it carries
  /// (poly/Privatize.h); `part` names the parts' loop, empty when nothing races (the loop then
  /// runs in parallel as it is). False with a diagnostic when another dependence is carried.
  bool privatize(const tir::CommandBase &c, const Stmt &l, const std::string &what, std::string &part) {
    PolyModel m;
    DependenceAnalysis d;
    LoopAnalysis a = analysis(l.var, &m, &d);
    if (a.verdict == LoopVerdict::Parallel) return true;
    if (a.verdict == LoopVerdict::Unknown) {
      error(c.loc, what + ": the dependences of loop " + l.varName + " could not be decided (" + a.reason + ")");
      return false;
    }
    std::vector<TensorP> updated;
    for (int dep : a.carried) {
      const PolyArray &arr = m.arrays[d.deps[dep].array];
      if (arr.isLocal) {
        error(c.loc, what + ": loop " + l.varName + " carries the local " + arr.name +
                         " (privatize keeps copies of arrays; a reduce's accumulator runs in parallel with atomics)");
        return false;
      }
      auto t = std::find_if(k_.tensors.begin(), k_.tensors.end(), [&](const TensorP &x) { return x->id == arr.tensor; });
      if (t == k_.tensors.end()) {
        error(c.loc, what + ": the array " + arr.name + " is not one of the kernel's");
        return false;
      }
      if (std::none_of(updated.begin(), updated.end(), [&](const TensorP &x) { return x->id == arr.tensor; })) updated.push_back(*t);
    }
    part = l.varName + "_part";
    while (find(k_.body, part)) part += "_";
    std::vector<TensorP> added;
    std::string why;
    std::optional<StmtP> parts = privatizeUpdates(l, updated, part, added, why);
    if (!parts) {
      error(c.loc, what + ": " + why);
      return false;
    }
    k_.tensors.insert(k_.tensors.end(), added.begin(), added.end());
    k_.body = replace(k_.body, &l, [&](const StmtP &) { return spliced(*parts); });
    return true;
  }

  // ---- the atomics race strategy ---------------------------------------------------------------


  static bool readsLocal(const ExprP &e, int64_t l) {
    return anyExpr(e, [l](const Expr &x) { return (x.kind == ExprKind::Local && x.local == l) || natMentions(x, l); });
  }

  /// `decl` declares a local with an initial value and `store` stores exactly that local into
  /// one element: the two ends of a row accumulator (`acc = init; ...; T[x] = acc`).
  static bool storesAccumulator(const Stmt &decl, const Stmt &store) {
    return decl.kind == StmtKind::DeclLocal && decl.value && store.kind == StmtKind::Assign && !store.compound &&
           store.value->kind == ExprKind::Local && store.value->local == decl.local;
  }

  /// `self op e` (op +, min or max, cin::updateForm) as an atomic update's operator and
  /// operand, or false.
  static bool splitUpdate(const ExprP &v, const std::function<bool(const ExprP &)> &isSelf, Stmt &into, ExprP &operand) {
    std::optional<UpdateForm> f = updateForm(v, isSelf);
    if (!f) return false;
    into.compound = true;
    into.atomic = true;
    into.isMinMax = f->isMinMax;
    into.isMax = f->isMax;
    into.op = ast::BinOp::Add;
    operand = f->operand;
    return true;
  }

  /// Rewrites the updates that make loop `l` carry dependences into atomic ones; false (with a
  /// diagnostic) when some carried dependence is not an update an atomic can perform.
  bool makeAtomic(const tir::CommandBase &c, const Stmt &l, const std::string &what) {
    // The rewrites below replace statements of the tree, `l` among them: after the first one,
    // only its name is used to find it again.
    const std::string loopName = l.varName;
    PolyModel m;
    DependenceAnalysis d;
    LoopAnalysis a = analysis(l.var, &m, &d);
    if (a.verdict == LoopVerdict::Parallel) return true;  // nothing races
    if (a.verdict == LoopVerdict::Unknown) {
      error(c.loc, what + ": the dependences of loop " + l.varName + " could not be decided (" + a.reason + ")");
      return false;
    }
    std::set<int64_t> tensors, locals;
    for (int dep : a.carried) {
      int array = d.deps[dep].array;
      const PolyArray &arr = m.arrays[array];
      if (!arr.isLocal) {
        tensors.insert(arr.tensor);
        continue;
      }
      // A local carried from iteration to iteration must be a reduce's accumulator (scan's
      // running value, a fold's state are read by each iteration: nothing atomic replaces them).
      for (int st : m.loops[static_cast<size_t>(a.loop)].statements) {
        const PolyStatement &ps = m.statements[st];
        bool writes = std::any_of(ps.accesses.begin(), ps.accesses.end(), [&](const PolyAccess &x) { return x.write && x.array == array; });
        if (writes && ps.reductionArray != array) {
          error(c.loc, what + ": loop " + l.varName + " runs in order: " + a.reason);
          return false;
        }
      }
      locals.insert(arr.local);
    }
    StmtP saved = k_.body;
    const Stmt *loopNow = &l;
    for (int64_t t : tensors) {
      loopNow = find(k_.body, loopName);
      if (!loopNow || !atomicTensor(c, *loopNow, t, what)) return restore(saved);
    }
    for (int64_t x : locals) {
      loopNow = find(k_.body, loopName);
      if (!loopNow || !atomicAccumulator(c, *loopNow, x, what)) return restore(saved);
    }
    loopNow = find(k_.body, loopName);
    if (!loopNow) {
      error(c.loc, what + ": the loop was lost rewriting its updates");
      return restore(saved);
    }
    LoopAnalysis after = analysis(loopNow->var);
    if (after.verdict != LoopVerdict::Parallel) {
      error(c.loc, what + ": even with atomic updates, " + after.reason);
      return restore(saved);
    }
    return true;
  }

  bool restore(const StmtP &saved) {
    k_.body = saved;
    return false;
  }

  /// Every write of tensor `t` in the loop is `t[x] = t[x] op e` and t is read nowhere else
  /// there: each write becomes `t[x] atomic op= e`.
  bool atomicTensor(const tir::CommandBase &c, const Stmt &l, int64_t t, const std::string &what) {
    std::string name;
    bool ok = true;
    std::string why;
    std::map<const Stmt *, StmtP> rewrites;
    forEachStmt(l.body[0], [&](const StmtP &s) {
      if (!ok) return;
      bool writes = s->kind == StmtKind::Assign && s->lhs->tensor->id == t;
      if (writes) {
        name = s->lhs->tensor->name;
        auto n = std::make_shared<Stmt>(*s);
        ExprP operand;
        auto isSelf = [&](const ExprP &e) { return sameElement(e, s->lhs); };
        if (s->compound || !splitUpdate(s->value, isSelf, *n, operand) || readsTensor(operand, t) ||
            std::any_of(s->lhs->indices.begin(), s->lhs->indices.end(), [&](const Nat &ix) { return ix.mentions(t); })) {
          ok = false;
          why = "`" + quoted(s) + "` is not an update " + name + "[x] = " + name + "[x] op e with op +, min or max";
          return;
        }
        n->value = operand;
        rewrites[s.get()] = n;
        return;
      }
      for (const ExprP &e : {s->value, s->lhs})
        if (readsTensor(e, t) || (s->kind == StmtKind::Forall && (s->lo.mentions(t) || s->hi.mentions(t)))) {
          ok = false;
          why = "loop " + l.varName + " reads the element it updates outside the update, in `" + quoted(s) + "`";
          return;
        }
    });
    if (!ok) {
      error(c.loc, what + ": " + why);
      return false;
    }
    for (const auto &[old, n] : rewrites) k_.body = replace(k_.body, old, [&](const StmtP &) { return std::vector<StmtP>{n}; });
    return true;
  }

  /// `acc = init; forall l { ... acc = acc op e ... }; T[x] = acc` (consecutive statements of one
  /// block) becomes `T[x] = init; forall l { ... T[x] atomic op= e ... }`.
  bool atomicAccumulator(const tir::CommandBase &c, const Stmt &l, int64_t x, const std::string &what) {
    const Stmt *parent = nullptr;
    size_t at = 0;
    forEachStmt(k_.body, [&](const StmtP &s) {
      if (s->kind != StmtKind::Block) return;
      for (size_t i = 0; i < s->body.size(); ++i)
        if (s->body[i].get() == &l) parent = s.get(), at = i;
    });
    auto bad = [&](const std::string &why) {
      error(c.loc, what + ": " + why);
      return false;
    };
    std::string accName = "%" + std::to_string(x);
    if (!parent || at == 0 || at + 1 >= parent->body.size())
      return bad("the accumulator " + accName + " of loop " + l.varName + " must be declared right before the loop and stored right after it");
    const StmtP &decl = parent->body[at - 1], &store = parent->body[at + 1];
    if (decl->kind != StmtKind::DeclLocal || decl->local != x || !storesAccumulator(*decl, *store))
      return bad("the accumulator " + accName + " of loop " + l.varName + " must be declared right before the loop and stored to one element right after it");
    accName = decl->localName;
    ExprP target = store->lhs;
    std::map<const Stmt *, StmtP> rewrites;
    bool ok = true;
    forEachStmt(l.body[0], [&](const StmtP &s) {
      if (!ok) return;
      if (s->kind == StmtKind::SetLocal && s->local == x) {
        auto n = std::make_shared<Stmt>(*s);
        n->kind = StmtKind::Assign;
        n->lhs = target;
        ExprP operand;
        auto isSelf = [&](const ExprP &e) { return e->kind == ExprKind::Local && e->local == x; };
        if (!splitUpdate(s->value, isSelf, *n, operand) || readsLocal(operand, x)) {
          ok = bad("`" + quoted(s) + "` is not an update " + accName + " = " + accName + " op e with op +, min or max");
          return;
        }
        n->value = operand;
        rewrites[s.get()] = n;
        return;
      }
      if (readsLocal(s->value, x) || readsLocal(s->lhs, x) ||
          (s->kind == StmtKind::Forall && (s->lo.mentions(x) || s->hi.mentions(x)))) {
        ok = bad("loop " + l.varName + " reads its accumulator " + accName + " outside the updates, in `" + quoted(s) + "`");
      }
    });
    if (!ok) return false;
    StmtP init = assign(target, decl->value);
    const Stmt *storePtr = store.get(), *declPtr = decl.get();
    for (const auto &[old, n] : rewrites) k_.body = replace(k_.body, old, [&](const StmtP &) { return std::vector<StmtP>{n}; });
    k_.body = replace(k_.body, storePtr, [](const StmtP &) { return std::vector<StmtP>{}; });
    k_.body = replace(k_.body, declPtr, [&](const StmtP &) { return std::vector<StmtP>{init}; });
    return true;
  }

  Kernel &k_;
  const tir::Schedule &s_;
  Diagnostics &d_;
  int cpuVectorBits_;
  bool ok_ = true;
  /// The hook of applyAll (splc --verify-each), which specializations' blocks call too.
  const AfterEach *afterEach_ = nullptr;
  /// In a specialize's block: commands that set the whole kernel are refused.
  bool inSpecialization_ = false;
  /// The specializations made so far, each its condition and its kernel, in order.
  std::vector<std::pair<ExprP, Kernel>> versions_;
};

}  // namespace

bool applyUserSchedule(cin::Kernel &k, const tir::Schedule &s, Diagnostics &diags, int cpuVectorBits,
                       const std::function<void(const cin::Kernel &, const tir::CommandBase &)> &afterEach) {
  Scheduler sch(k, s, diags, cpuVectorBits);
  return sch.run(afterEach);
}

}  // namespace spl::poly
