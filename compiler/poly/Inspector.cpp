/// \file Inspector.cpp: PLDI'15 inspectors derived with isl (see Inspector.h).
#include "poly/Inspector.h"

#include <isl/aff.h>
#include <isl/ast.h>
#include <isl/ast_build.h>
#include <isl/ctx.h>
#include <isl/id.h>
#include <isl/map.h>
#include <isl/options.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include <map>
#include <memory>
#include <variant>

#include "poly/IslAst.h"
#include "poly/IslSupport.h"
#include "support/Error.h"

namespace spl::poly {
namespace {

struct Loop {
  std::string name;
  std::string isl;  // over the source row i0 and column j0
};

std::string joinIsl(const std::vector<Loop> &loops) {
  std::string s;
  for (const Loop &l : loops) s += (s.empty() ? "" : ", ") + l.isl;
  return s;
}

/// An affine expression of the script over the current loops, as isl text over i0 and j0.
/// `last` receives the position of the innermost loop it mentions (-1: none).
std::string islOf(const ast::Expr &e, const std::vector<Loop> &loops, int &last, const std::string &cmd) {
  switch (e.op) {
    case ast::ExprOp::IntLit: return std::to_string(e.ival);
    case ast::ExprOp::Var:
      for (size_t k = 0; k < loops.size(); ++k)
        if (loops[k].name == e.text) {
          last = std::max(last, static_cast<int>(k));
          return "(" + loops[k].isl + ")";
        }
      throw CompileError(e.loc, cmd + ": no loop named '" + e.text + "' in the script so far");
    case ast::ExprOp::Unary:
      if (e.unop == ast::UnOp::Neg) return "(-" + islOf(*e.kids[0], loops, last, cmd) + ")";
      break;
    case ast::ExprOp::Binary: {
      const char *op = e.binop == ast::BinOp::Add ? " + " : e.binop == ast::BinOp::Sub ? " - " : e.binop == ast::BinOp::Mul ? "*" : nullptr;
      if (!op) break;
      return "(" + islOf(*e.kids[0], loops, last, cmd) + op + islOf(*e.kids[1], loops, last, cmd) + ")";
    }
    default: break;
  }
  throw CompileError(e.loc, cmd + ": the expression must be affine in the loops (integers, loop names, + - *)");
}

std::string nameArg(const tir::CommandBase &c, const tir::NameArg &a, size_t k) {
  if (!a.ok) throw CompileError(a.loc, c.name + ": argument " + std::to_string(k + 1) + " must name a loop");
  return a.text;
}

int64_t intArg(const tir::CommandBase &c, const tir::CountArg &a, size_t k) {
  if (!a.ok) throw CompileError(a.loc, c.name + ": argument " + std::to_string(k + 1) + " must be a positive integer");
  return a.value;
}

size_t position(const std::vector<Loop> &loops, const std::string &name, const tir::CommandBase &c, SourceLoc at) {
  for (size_t k = 0; k < loops.size(); ++k)
    if (loops[k].name == name) return k;
  std::string all;
  for (const Loop &l : loops) all += (all.empty() ? "" : ", ") + l.name;
  throw CompileError(at, c.name + ": no loop named '" + name + "' (the loops are " + all + ")");
}

void checkFresh(const std::vector<Loop> &loops, const std::string &name, const tir::CommandBase &c, SourceLoc at) {
  for (const Loop &l : loops)
    if (l.name == name) throw CompileError(at, c.name + ": a loop named '" + name + "' exists already");
}

/// A piecewise affine expression of the parameters as a Nat (one piece under the context).
Nat natOfPwAff(isl_ctx *ctx, isl_pw_aff *pa, const std::string &context, const std::map<std::string, Nat> &ids,
               SourceLoc loc, const std::string &what) {
  isl_set *ctxSet = isl_set_read_from_str(ctx, context.c_str());
  isl_ast_build *build = isl_ast_build_from_context(ctxSet);
  isl_ast_expr *e = pa ? isl_ast_build_expr_from_pw_aff(build, pa) : nullptr;
  isl_ast_build_free(build);
  std::optional<Nat> n = e ? natOfAstExpr(e, ids) : std::nullopt;
  isl_ast_expr_free(e);
  if (!n && isl_ctx_last_error(ctx) == isl_error_quota) throw CompileError(loc, "inspector: " + IslContext::quotaReason("for " + what));
  if (!n) throw CompileError(loc, "inspector: isl gives no closed form for " + what);
  return *n;
}

/// The bounds of every loop over the image of the dense space, and each loop as a Nat of the
/// source's row and column.
void boundsAndExpressions(isl_ctx *ctx, isl_set *image, const std::vector<Loop> &loops, const std::map<std::string, Nat> &sizes,
                          const std::string &paramsContext, NatVarId row, NatVarId column, InspectorLayout &out) {
  for (size_t k = 0; k < loops.size(); ++k) {
    out.dims.push_back(loops[k].name);
    // A padded loop (inside the compacted one) spans its extent on a large enough matrix: a
    // tile's rows are b wide even when the matrix has fewer (the padding is then zeros).
    const std::string context = k > out.compacted ? "[n, m] -> { : n >= 1048576 and m >= 1048576 }" : paramsContext;
    auto bound = [&](isl_pw_aff *pa) {
      return isl_pw_aff_gist_params(pa, isl_set_read_from_str(ctx, context.c_str()));
    };
    out.lo.push_back(natOfPwAff(ctx, bound(isl_set_dim_min(isl_set_copy(image), static_cast<int>(k))), context, sizes,
                                out.compactLoc, "the lower bound of loop " + loops[k].name));
    out.hi.push_back(natOfPwAff(ctx, bound(isl_set_dim_max(isl_set_copy(image), static_cast<int>(k))), context, sizes,
                                out.compactLoc, "the upper bound of loop " + loops[k].name));
    std::map<std::string, Nat> ids = sizes;
    ids.emplace("i0", Nat::var(row));
    ids.emplace("j0", Nat::var(column));
    isl_pw_aff *pa = isl_pw_aff_read_from_str(ctx, ("[n, m, i0, j0] -> { [(" + loops[k].isl + ")] }").c_str());
    out.dimOf.push_back(natOfPwAff(ctx, pa, "[n, m, i0, j0] -> { : i0 >= 0 and j0 >= 0 }", ids, out.compactLoc,
                                   "loop " + loops[k].name));
  }
}

}  // namespace

InspectorLayout deriveInspectorLayout(const std::vector<tir::ScriptCommand> &script, SourceLoc where, const Nat &n,
                                      const Nat &m, NatVarId row, NatVarId column) {
  if (script.empty() || !std::holds_alternative<tir::MakeDense>(script[0]))
    throw CompileError(script.empty() ? where : tir::commandBase(script[0]).loc,
                       "inspector: the script must open with make_dense(i, j) (the rows and the columns of the source)");
  std::vector<Loop> loops;
  InspectorLayout out;
  bool compacted = false;
  for (const tir::ScriptCommand &command : script) {
    const tir::CommandBase &base = tir::commandBase(command);
    if (compacted) throw CompileError(base.loc, "inspector: " + base.name + " after the compaction (compact or compact_and_pad ends the script)");
    if (const auto *c = std::get_if<tir::MakeDense>(&command)) {
      if (!loops.empty()) throw CompileError(c->loc, "inspector: make_dense appears twice");
      if (c->arity != 2) throw CompileError(c->loc, "make_dense takes the names of the row and the column loops: make_dense(i, j)");
      std::string i = nameArg(*c, c->row, 0), j = nameArg(*c, c->column, 1);
      if (i == j) throw CompileError(c->column.loc, "make_dense: the row and column loops need two names");
      loops = {{i, "i0"}, {j, "j0"}};
    } else if (const auto *c = std::get_if<tir::Skew>(&command)) {
      if (c->arity != 2) throw CompileError(c->loc, "skew takes a new loop name and its expression: skew(d, j - i)");
      std::string d = nameArg(*c, c->loop, 0);
      checkFresh(loops, d, *c, c->loop.loc);
      int last = -1;
      std::string text = islOf(*c->offset, loops, last, "skew");
      if (last < 0) throw CompileError(c->offsetLoc, "skew: the expression mentions no loop");
      loops[last] = {d, text};
    } else if (const auto *c = std::get_if<tir::ReorderLoops>(&command)) {
      if (c->arity != loops.size())
        throw CompileError(c->loc, "reorder: name every loop once (" + std::to_string(loops.size()) + " loops)");
      std::vector<Loop> next;
      for (size_t k = 0; k < c->loops.size(); ++k) {
        std::string name = nameArg(*c, c->loops[k], k);
        for (const Loop &l : next)
          if (l.name == name) throw CompileError(c->loops[k].loc, "reorder: loop '" + name + "' is named twice");
        next.push_back(loops[position(loops, name, *c, c->loops[k].loc)]);
      }
      loops = next;
    } else if (const auto *c = std::get_if<tir::TileLoops>(&command)) {
      if (c->arity != 4) throw CompileError(c->loc, "tile takes two adjacent loops and their tile sizes: tile(i, j, 2, 2)");
      size_t a = position(loops, nameArg(*c, c->outer, 0), *c, c->outer.loc), b = position(loops, nameArg(*c, c->inner, 1), *c, c->inner.loc);
      int64_t sa = intArg(*c, c->outerSize, 2), sb = intArg(*c, c->innerSize, 3);
      if (b != a + 1) throw CompileError(c->loc, "tile: the two loops must be adjacent, outer first");
      Loop la = loops[a], lb = loops[b];
      std::string ta = la.name + "_tile", tb = lb.name + "_tile";
      checkFresh(loops, ta, *c, c->loc);
      checkFresh(loops, tb, *c, c->loc);
      auto tileOf = [](const Loop &l, int64_t s) { return "floor((" + l.isl + ")/" + std::to_string(s) + ")"; };
      std::vector<Loop> repl = {{ta, tileOf(la, sa)},
                                {tb, tileOf(lb, sb)},
                                {la.name, "(" + la.isl + ") - " + std::to_string(sa) + "*" + tileOf(la, sa)},
                                {lb.name, "(" + lb.isl + ") - " + std::to_string(sb) + "*" + tileOf(lb, sb)}};
      loops.erase(loops.begin() + a, loops.begin() + b + 1);
      loops.insert(loops.begin() + a, repl.begin(), repl.end());
    } else if (const auto *c = std::get_if<tir::Compact>(&command)) {
      if (c->arity != 1) throw CompileError(c->loc, c->name + " takes the loop to compact: " + c->name + "(j)");
      out.compacted = position(loops, nameArg(*c, c->loop, 0), *c, c->loop.loc);
      out.pad = c->pad;
      out.compactLoc = c->loc;
      compacted = true;
    } else {
      throw CompileError(base.loc, "unknown inspector command '" + base.name +
                                       "' (the script is make_dense, then skew, reorder or tile, then compact or compact_and_pad)");
    }
  }
  if (!compacted) throw CompileError(tir::commandBase(script.back()).loc, "inspector: the script must end with compact(x) or compact_and_pad(x)");
  if (out.compacted > 1)
    throw CompileError(out.compactLoc, "inspector: at most one loop may lie outside the compacted one (found " + std::to_string(out.compacted) + ")");

  IslContext ctx;
  out.mapText = "[n, m] -> { [i0, j0] -> [" + joinIsl(loops) + "] : 0 <= i0 < n and 0 <= j0 < m }";
  isl_map *map = isl_map_read_from_str(ctx.raw(), out.mapText.c_str());
  if (!map && ctx.quotaExceeded())
    throw CompileError(out.compactLoc, "inspector: " + IslContext::quotaReason("reading the transformation `" + out.mapText + "`"));
  if (!map) throw CompileError(out.compactLoc, "inspector: isl cannot read the transformation `" + out.mapText + "` (is it affine?)");
  // Injective on the dense space: then slots collide only where the source stores one (row,
  // column) twice, which the inspector checks at run time.
  isl_bool injective = isl_map_is_injective(map);
  if (injective == isl_bool_error && ctx.quotaExceeded()) {
    isl_map_free(map);
    throw CompileError(out.compactLoc, "inspector: " + IslContext::quotaReason("proving `" + out.mapText + "` injective"));
  }
  if (injective != isl_bool_true) {
    isl_map_free(map);
    throw CompileError(out.compactLoc, "inspector: the transformation maps two matrix entries to one slot (isl: `" +
                                           out.mapText + "` is not injective)");
  }
  isl_set *image = isl_set_intersect_params(isl_map_range(map), isl_set_read_from_str(ctx.raw(), "[n, m] -> { : n >= 1 and m >= 1 }"));
  const std::string paramsContext = "[n, m] -> { : n >= 1 and m >= 1 }";
  std::map<std::string, Nat> sizes = {{"n", n}, {"m", m}};
  try {
    boundsAndExpressions(ctx.raw(), image, loops, sizes, paramsContext, row, column, out);
  } catch (...) {
    isl_set_free(image);
    throw;
  }
  isl_set_free(image);
  if (out.compacted == 1) {
    if (out.dimOf[0].mentions(column.id))
      throw CompileError(out.compactLoc, "inspector: the loop outside the compacted one (" + loops[0].name +
                                             ") must depend on the row only: rows are gathered by their outer point");
    if (out.lo[0] != Nat(0))
      throw CompileError(out.compactLoc, "inspector: the outer loop " + loops[0].name + " must start at 0");
    out.outerIsl = loops[0].isl;
  }
  return out;
}

cin::StmtP generateInspectorLoops(const InspectorLayout &layout, const std::vector<InspectorPhase> &phases, const Nat &n,
                                  const Nat &m, const std::string &rowName, SourceLoc loc) {
  // Schedule: [pass, outer, order, row] with an outer loop, [pass, order, row] without.
  bool outer = !layout.outerIsl.empty();
  std::string text;
  for (size_t q = 0; q < phases.size(); ++q) {
    const InspectorPhase &p = phases[q];
    std::string s = "S" + std::to_string(q), pass = std::to_string(p.pass), order = std::to_string(p.order);
    std::string piece;
    switch (p.domain) {
      case InspectorPhase::PerRow:
        piece = outer ? s + "[i0] -> [" + pass + ", " + layout.outerIsl + ", " + order + ", i0] : 0 <= i0 < n"
                      : s + "[i0] -> [" + pass + ", " + order + ", i0] : 0 <= i0 < n";
        break;
      case InspectorPhase::PerOuter:
        if (!outer) throw InternalError("inspector: a per-outer phase without an outer loop");
        piece = s + "[o] -> [" + pass + ", o, " + order + ", 0] : exists (i0 : 0 <= i0 < n and o = " + layout.outerIsl + ")";
        break;
      case InspectorPhase::Once:
        if (outer) throw InternalError("inspector: a once phase beside an outer loop");
        piece = s + "[] -> [" + pass + ", " + order + ", 0]";
        break;
    }
    text += (text.empty() ? "" : "; ") + piece;
  }
  IslContext ctx;
  isl_union_map *schedule = isl_union_map_read_from_str(ctx.raw(), ("[n, m] -> { " + text + " }").c_str());
  if (!schedule) throw InternalError("inspector: isl cannot read the phase schedule " + text);
  isl_ast_build *build = isl_ast_build_from_context(isl_set_read_from_str(ctx.raw(), "[n, m] -> { : n >= 0 and m >= 0 }"));
  isl_ast_node *ast = isl_ast_build_node_from_schedule_map(build, schedule);
  isl_ast_build_free(build);
  if (!ast && ctx.quotaExceeded()) throw CompileError(loc, "inspector: " + IslContext::quotaReason("building the phase loops"));
  if (!ast) throw InternalError("inspector: isl could not build the phase loops");
  // isl's loops become serial foralls (the inspector runs on the host, in order), its
  // statement instances the phases' bodies.
  std::map<std::string, std::string> loopNames;  // isl iterator -> the loop's name in CIN
  if (outer) {
    loopNames["c1"] = layout.dims[0];
    loopNames["c3"] = rowName;
  } else {
    loopNames["c2"] = rowName;
  }
  AstToCin tr(
      {{"n", n}, {"m", m}},
      [&](const std::string &iter, int, const std::string &) -> std::optional<AstLoop> {
        std::string name = loopNames.count(iter) ? loopNames[iter] : iter;
        return AstLoop{freshNatVar(name), name, cin::ForallKind::Serial};
      },
      [&](const std::string &stmt, const std::vector<Nat> &at, std::string &) -> std::optional<cin::StmtP> {
        size_t which = std::stoul(stmt.substr(1));
        return phases.at(which).body(at.empty() ? Nat(0) : at[0]);
      },
      loc);
  std::string why;
  std::optional<cin::StmtP> s = tr.translate(ast, why);
  isl_ast_node_free(ast);
  if (!s) throw InternalError("inspector: " + why);
  return *s;
}

}  // namespace spl::poly
