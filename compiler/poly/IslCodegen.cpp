/// \file IslCodegen.cpp: a kernel's loops regenerated from isl's AST (see IslCodegen.h).
#include "poly/IslCodegen.h"

#include <isl/ast.h>
#include <isl/ast_build.h>
#include <isl/aff.h>
#include <isl/id.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_set.h>

#include <algorithm>
#include <cstdlib>
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
  return affineIslText(n, [](const NatAtom &a) -> std::optional<std::string> {
           if (a.kind == NatAtomKind::Var) return std::string("v");
           return std::nullopt;
         }).has_value();
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
    std::string dim;             // the isl set dimension of its variable
    std::vector<size_t> leaves;  // the statements under it
    std::string lo, hi;          // isl text of the bounds
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
      r.loops.push_back({s.get(), "x" + std::to_string(index), {}, {}, {}});
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

    std::map<int64_t, std::string> dims;
    for (const Region::Loop &l : r.loops) dims.emplace(l.stmt->var, l.dim);
    IslParams names(dims);
    for (size_t k = 0; k < r.loops.size(); ++k) {
      Region::Loop &l = r.loops[k];
      // The root's bounds are evaluated where it starts: whatever they read is a parameter,
      // and so is a bound of more than one piece.
      auto root = [&](const Nat &b) { return convexBounds(*l.stmt) ? names.invariant(b) : names.opaque(b); };
      auto lo = k == 0 ? root(l.stmt->lo) : names.text(l.stmt->lo);
      auto hi = k == 0 ? root(l.stmt->hi) : names.text(l.stmt->hi);
      if (!lo || !hi) return kept("its bounds are not affine");
      l.lo = *lo;
      l.hi = *hi;
    }
    std::string space = names.space();
    std::vector<std::string> tuples, domains;
    for (size_t k = 0; k < r.leaves.size(); ++k) {
      std::string args, cond;
      for (size_t l : r.leaves[k].loops) {
        const Region::Loop &loop = r.loops[l];
        args += (args.empty() ? "" : ", ") + loop.dim;
        cond += std::string(cond.empty() ? "" : " and ") + loop.lo + " <= " + loop.dim + " < " + loop.hi;
      }
      tuples.push_back("S" + std::to_string(k) + "[" + args + "]");
      domains.push_back(tuples.back() + (cond.empty() ? "" : " : " + cond));
    }

    IslContext owner(kRegionQuota);
    isl_ctx *ctx = owner.raw();
    isl_schedule *sched = schedule(ctx, r, r.root, space, tuples, domains);
    if (!sched) return kept("isl could not build its schedule tree");
    isl_ast_build *build = isl_ast_build_from_context(isl_set_read_from_str(ctx, names.context().c_str()));
    if (!build) isl_schedule_free(sched);
    isl_ast_node *ast = build ? isl_ast_build_node_from_schedule(build, sched) : nullptr;
    isl_ast_build_free(build);
    if (!ast) return kept("isl could not build its AST");
    if (report_) {
      char *c = isl_ast_node_to_C_str(ast);
      std::string text = "loop `" + root->varName + "`:\n" + (c ? c : "");
      free(c);
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
    isl_ast_node_free(ast);
    if (!out) return kept(why);
    return *out;
  }

  /// The schedule tree of `n`, bottom up: a statement's domain; a sequence of its children's
  /// trees; a loop's band (atomic, under a mark `L<index>`) above its child's tree.
  isl_schedule *schedule(isl_ctx *ctx, const Region &r, const Region::Node &n, const std::string &space,
                         const std::vector<std::string> &tuples, const std::vector<std::string> &domains) {
    switch (n.kind) {
      case Region::Node::LeafN:
        return isl_schedule_from_domain(isl_union_set_read_from_str(ctx, (space + "{ " + domains[n.index] + " }").c_str()));
      case Region::Node::SeqN: {
        isl_schedule *seq = nullptr;
        for (const Region::Node &c : n.children) {
          isl_schedule *s = schedule(ctx, r, c, space, tuples, domains);
          if (!s) continue;
          seq = seq ? isl_schedule_sequence(seq, s) : s;
        }
        return seq;
      }
      case Region::Node::LoopN: {
        isl_schedule *inner = schedule(ctx, r, n.children[0], space, tuples, domains);
        if (!inner) return nullptr;  // an empty loop
        const Region::Loop &loop = r.loops[n.index];
        std::string band;
        for (size_t k : loop.leaves) band += (band.empty() ? "" : "; ") + tuples[k] + " -> [(" + loop.dim + ")]";
        isl_multi_union_pw_aff *mupa = isl_multi_union_pw_aff_read_from_str(ctx, (space + "[{ " + band + " }]").c_str());
        isl_schedule *s = isl_schedule_insert_partial_schedule(inner, mupa);
        isl_schedule_node *node = isl_schedule_node_child(isl_schedule_get_root(s), 0);
        isl_schedule_free(s);
        node = isl_schedule_node_band_member_set_ast_loop_type(node, 0, isl_ast_loop_atomic);
        node = isl_schedule_node_insert_mark(node, isl_id_alloc(ctx, ("L" + std::to_string(n.index)).c_str(), nullptr));
        s = isl_schedule_node_get_schedule(node);
        isl_schedule_node_free(node);
        return s;
      }
    }
    return nullptr;
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
