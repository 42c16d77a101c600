/// \file IslCodegen.cpp: a kernel's loops regenerated from isl's AST (see IslCodegen.h).
#include "poly/IslCodegen.h"

#include <algorithm>
#include <map>

#include "poly/IslAst.h"
#include "poly/IslSupport.h"

namespace spl::poly {
namespace {

using cin::Stmt;
using cin::StmtKind;
using cin::StmtP;

/// isl's work on one region is bounded: a region isl cannot finish keeps its loops.
constexpr unsigned long kRegionQuota = 2'000'000;
/// ... and so is its depth: the cost of isl's AST generation grows steeply with the number of
/// nested loops (about cubically: a copy over 40 dimensions took 4.5 s, over 80 half a minute,
/// before the operations quota ran out), so a deeper nest keeps its loops, as Polly keeps a
/// region it does not model. Tiled nests of real kernels stay far below.
constexpr size_t kMaxRegionDepth = 16;

/// The bound is affine in Var atoms alone (loop variables and the kernel's nats).
bool affineInVars(const Nat &n) {
  return isAffine(n, [](const NatAtom &a) { return a.kind == NatAtomKind::Var; });
}

bool hasAtom(const Nat &n, NatAtomKind kind) {
  for (const Nat::Term &t : n.terms())
    for (const auto &[atom, power] : t.mono.factors) {
      if (atom->kind == kind) return true;
      for (const Nat &a : atom->args)
        if (hasAtom(a, kind)) return true;
    }
  return false;
}

/// lo <= v < hi is one convex piece: an upper bound with a max (a loop to max(1, m)) or a lower
/// bound with a min is a union, which isl runs as a hull with a guard in every iteration.
bool convexBounds(const Stmt &f) { return !hasAtom(f.hi, NatAtomKind::Max) && !hasAtom(f.lo, NatAtomKind::Min); }

/// A bound isl takes as it is: one convex piece, affine in Var atoms.
bool inRegion(const Stmt &f) { return convexBounds(f) && affineInVars(f.lo) && affineInVars(f.hi); }

StmtP withBody(const StmtP &s, std::vector<StmtP> body) {
  auto c = std::make_shared<Stmt>(*s);
  c->body = std::move(body);
  return c;
}

/// One region: its loops, its statements (opaque boxes) and the program order between them.
struct Region {
  struct Loop {
    const Stmt *stmt;
    std::vector<size_t> leaves;  // the statements under it
    IslParams::Declared lo = IslParams::Declared::No, hi = IslParams::Declared::No;  // how isl takes its bounds
  };
  struct Leaf {
    StmtP stmt;                 // already regenerated inside
    std::vector<size_t> loops;  // the region loops around it, outermost first
  };
  /// The region's structure: a statement, a loop over one child, or a sequence.
  struct Node {
    enum Kind { LeafN, LoopN, SeqN } kind;
    size_t index = 0;
    StmtP stmt;  // the block or forall (LoopN, SeqN)
    std::vector<Node> children;
  };
  std::vector<Loop> loops;
  std::vector<Leaf> leaves;
  Node root;
};

class Regenerator {
 public:
  explicit Regenerator(IslCodegenReport *report) : report_(report) {}

  StmtP walk(const StmtP &s) {
    if (!s) return s;
    switch (s->kind) {
      case StmtKind::Forall: return region(s);
      case StmtKind::Block:
      case StmtKind::If:
      case StmtKind::Alloc: {
        std::vector<StmtP> body;
        for (const StmtP &c : s->body) body.push_back(walk(c));
        return withBody(s, std::move(body));
      }
      default: return s;
    }
  }

 private:
  Region::Node collect(Region &r, const StmtP &s, std::vector<size_t> &enclosing, bool isRoot) {
    if (s->kind == StmtKind::Block) {
      Region::Node seq{Region::Node::SeqN, 0, s, {}};
      for (const StmtP &c : s->body) seq.children.push_back(collect(r, c, enclosing, false));
      return seq;
    }
    if (s->kind == StmtKind::Forall && (isRoot || inRegion(*s))) {
      size_t index = r.loops.size();
      r.loops.push_back({s.get(), {}});
      enclosing.push_back(index);
      Region::Node loop{Region::Node::LoopN, index, s, {}};
      loop.children.push_back(collect(r, s->body.at(0), enclosing, false));
      enclosing.pop_back();
      return loop;
    }
    size_t index = r.leaves.size();
    r.leaves.push_back({walk(s), enclosing});
    for (size_t l : enclosing) r.loops[l].leaves.push_back(index);
    return {Region::Node::LeafN, index, s, {}};
  }

  /// The region as it was, with its statements' insides regenerated.
  static StmtP original(const Region &r, const Region::Node &n) {
    if (n.kind == Region::Node::LeafN) return r.leaves[n.index].stmt;
    std::vector<StmtP> body;
    for (const Region::Node &c : n.children) body.push_back(original(r, c));
    return withBody(n.stmt, std::move(body));
  }

  StmtP region(const StmtP &root) {
    Region r;
    std::vector<size_t> enclosing;
    r.root = collect(r, root, enclosing, true);
    // Fallback: the region's own loops over its regenerated statements.
    auto kept = [&](const std::string &why) {
      if (report_) report_->kept.push_back("loop `" + root->varName + "`: " + why);
      return original(r, r.root);
    };
    if (r.leaves.empty()) return root;  // no statement: nothing to regenerate
    size_t depth = 0;
    for (const auto &leaf : r.leaves) depth = std::max(depth, leaf.loops.size());
    if (depth > kMaxRegionDepth)
      return kept("its nest is " + std::to_string(depth) + " loops deep, more than isl's AST generation is given (" +
                  std::to_string(kMaxRegionDepth) + ")");

    // The parameters first (the bounds, outermost loop first), then every object over all of them.
    IslContext owner(kRegionQuota);
    std::set<int64_t> dims;
    for (const Region::Loop &l : r.loops) dims.insert(l.stmt->var);
    IslParams names(owner.ctx(), dims);
    for (size_t k = 0; k < r.loops.size(); ++k) {
      Region::Loop &l = r.loops[k];
      // The root's bounds are evaluated where it starts: whatever they read is a parameter,
      // and so is a bound of more than one piece.
      auto declare = [&](const Nat &b) {
        if (k > 0) return names.declare(b);
        return convexBounds(*l.stmt) ? names.declareInvariant(b) : names.declareOpaque(b);
      };
      l.lo = declare(l.stmt->lo);
      l.hi = declare(l.stmt->hi);
      if (l.lo == IslParams::Declared::No || l.hi == IslParams::Declared::No) return kept("its bounds are not affine");
    }
    std::vector<IslParams::Domain> domains;
    std::optional<isl::schedule> sched;
    isl::ast_node ast;
    try {
      for (size_t k = 0; k < r.leaves.size(); ++k) {
        std::vector<int64_t> vars;
        for (size_t l : r.leaves[k].loops) vars.push_back(r.loops[l].stmt->var);
        IslParams::Domain d = names.domain("S" + std::to_string(k), vars);
        for (size_t l : r.leaves[k].loops) {
          const Region::Loop &loop = r.loops[l];
          d.set = d.set.intersect(names.range(d, loop.stmt->var, loop.stmt->lo, loop.lo, loop.stmt->hi, loop.hi));
        }
        domains.push_back(std::move(d));
      }
      sched = schedule(r, r.root, domains);
    } catch (const isl::exception &e) {
      return kept(owner.quotaExceeded(e) ? IslContext::quotaReason("building its schedule tree") : "isl could not build its schedule tree");
    }
    if (!sched) return kept("isl could not build its schedule tree");
    try {
      ast = isl::ast_build::from_context(names.context()).node_from(*sched);
    } catch (const isl::exception &e) {
      return kept(owner.quotaExceeded(e) ? IslContext::quotaReason("building its AST") : "isl could not build its AST");
    }
    if (report_) {
      std::string text = "loop `" + root->varName + "`:\n" + ast.to_C_str();
      for (const auto &[param, meaning] : names.meanings()) text += "  " + param + " = " + meaning.str() + "\n";
      for (size_t k = 0; k < r.leaves.size(); ++k) {  // what each statement is (its first line)
        std::string line = cin::print(r.leaves[k].stmt);
        line.erase(0, std::min(line.size(), line.find_first_not_of(' ')));
        text += "  S" + std::to_string(k) + ": " + line.substr(0, line.find('\n')) + "\n";
      }
      report_->asts.push_back(text);
    }

    std::vector<bool> loopTaken(r.loops.size(), false), leafTaken(r.leaves.size(), false);
    AstToCin tr(
        names.meanings(),
        [&](const std::string &, int, const std::string &mark) -> std::optional<AstLoop> {
          if (mark.size() < 2 || mark[0] != 'L') return std::nullopt;
          size_t k = std::stoul(mark.substr(1));
          if (k >= r.loops.size() || loopTaken[k]) return std::nullopt;  // a loop isl copied
          loopTaken[k] = true;
          const Stmt &f = *r.loops[k].stmt;
          return AstLoop{NatVarId{f.var, f.varName}, f.varName, f.forall, &f, cin::isGpuLevel(f.forall)};
        },
        [&](const std::string &name, const std::vector<Nat> &at, std::string &why) -> std::optional<StmtP> {
          size_t k = std::stoul(name.substr(1));
          const Region::Leaf &leaf = r.leaves.at(k);
          if (leafTaken[k] || at.size() != leaf.loops.size()) {
            why = "isl's AST runs statement " + name + " in more than one place";
            return std::nullopt;
          }
          leafTaken[k] = true;
          NatSubst sub;
          for (size_t j = 0; j < at.size(); ++j) sub.vars.emplace(r.loops[leaf.loops[j]].stmt->var, at[j]);
          return cin::substitute(leaf.stmt, sub);
        },
        root->loc);
    std::string why;
    std::optional<StmtP> out = tr.translate(ast, why);
    if (!out) return kept(why);
    return *out;
  }

  /// The schedule tree of `n`, bottom up: a statement's domain; a sequence of its children's
  /// trees; a loop's band (atomic, under a mark `L<index>`) above its child's tree. nullopt
  /// where there is no statement.
  std::optional<isl::schedule> schedule(const Region &r, const Region::Node &n, const std::vector<IslParams::Domain> &domains) {
    switch (n.kind) {
      case Region::Node::LeafN: return isl::schedule::from_domain(isl::union_set(domains[n.index].set));
      case Region::Node::SeqN: {
        std::optional<isl::schedule> seq;
        for (const Region::Node &c : n.children) {
          std::optional<isl::schedule> s = schedule(r, c, domains);
          if (!s) continue;
          // (isl's C++ interface has no schedule sequence: the C call, ownership through manage)
          seq = seq ? isl::manage(isl_schedule_sequence(seq->release(), s->release())) : *s;
        }
        return seq;
      }
      case Region::Node::LoopN: {
        std::optional<isl::schedule> inner = schedule(r, n.children[0], domains);
        if (!inner) return std::nullopt;  // an empty loop
        const Region::Loop &loop = r.loops[n.index];
        // The band: each statement under the loop at the loop's variable (its dimension there).
        std::optional<isl::union_pw_aff> band;
        for (size_t k : loop.leaves) {
          const IslParams::Domain &d = domains[k];
          isl::union_pw_aff x(IslParams::dim(d, loop.stmt->var));
          band = band ? band->union_add(x) : x;
        }
        isl::schedule_node node = inner->root().child(0).insert_partial_schedule(isl::multi_union_pw_aff(*band));
        node = node.as<isl::schedule_node_band>().member_set_ast_loop_atomic(0);
        return node.insert_mark("L" + std::to_string(n.index)).schedule();
      }
    }
    return std::nullopt;
  }

  IslCodegenReport *report_;
};

}  // namespace

cin::StmtP generateFromIsl(const cin::Kernel &k, IslCodegenReport *report) {
  Regenerator g(report);
  return g.walk(k.body);
}

std::string emitIslAst(const cin::Kernel &k) {
  IslCodegenReport report;
  generateFromIsl(k, &report);
  std::string out = "ast " + k.name + (k.cuda ? " (cuda)" : "") + ": loops generated by isl_ast_build, per region\n";
  for (const std::string &a : report.asts) out += a;
  for (const std::string &why : report.kept) out += "kept " + why + "\n";
  return out;
}

}  // namespace spl::poly
