/// \file Inspector.cpp: PLDI'15 inspectors derived with isl (see Inspector.h).
#include "poly/Inspector.h"

#include <map>
#include <memory>
#include <variant>

#include "poly/IslAst.h"
#include "poly/IslSupport.h"
#include "support/Error.h"
#include "support/Format.h"

namespace spl::poly {
namespace {

/// Where a script's expressions are built: the row i0 and the column j0 of the source and the
/// sizes n and m, on a domain (the dense space { [i0, j0] }, or a parameter space where i0 and
/// j0 are parameters too, to read a loop back as a Nat of them).
struct Frame {
  isl::set domain;
  isl::pw_aff i0, j0;
  isl::pw_aff constant(long c) const {
    return isl::pw_aff(isl::aff::zero_on_domain(domain.space())).intersect_domain(domain).add_constant(c);
  }
};

/// A loop of the script: its name and its value as an affine expression of the source's row
/// and column, built in any frame.
struct Loop {
  std::string name;
  std::function<isl::pw_aff(const Frame &)> value;
};

/// The value of a constant expression of the script (integers, + - *), or nullopt.
std::optional<int64_t> constantOf(const ast::Expr &e) {
  switch (e.op) {
    case ast::ExprOp::IntLit: return e.ival;
    case ast::ExprOp::Unary:
      if (e.unop != ast::UnOp::Neg) return std::nullopt;
      if (auto x = constantOf(*e.kids[0])) return -*x;
      return std::nullopt;
    case ast::ExprOp::Binary: {
      auto x = constantOf(*e.kids[0]), y = constantOf(*e.kids[1]);
      if (!x || !y) return std::nullopt;
      if (e.binop == ast::BinOp::Add) return *x + *y;
      if (e.binop == ast::BinOp::Sub) return *x - *y;
      if (e.binop == ast::BinOp::Mul) return *x * *y;
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

/// An affine expression of the script over the current loops. `last` receives the position of
/// the innermost loop it mentions (-1: none).
std::function<isl::pw_aff(const Frame &)> islOf(const ast::Expr &e, const std::vector<Loop> &loops, int &last,
                                                const std::string &cmd) {
  using Value = std::function<isl::pw_aff(const Frame &)>;
  auto notAffine = [&]() {
    return CompileError(e.loc, cmd + ": the expression must be affine in the loops (integers, loop names, + - *)");
  };
  switch (e.op) {
    case ast::ExprOp::IntLit: {
      int64_t c = e.ival;
      return [c](const Frame &f) { return f.constant(c); };
    }
    case ast::ExprOp::Var:
      for (size_t k = 0; k < loops.size(); ++k)
        if (loops[k].name == e.text) {
          last = std::max(last, static_cast<int>(k));
          return loops[k].value;
        }
      throw CompileError(e.loc, cmd + ": no loop named '" + e.text + "' in the script so far");
    case ast::ExprOp::Unary:
      if (e.unop == ast::UnOp::Neg) {
        Value x = islOf(*e.kids[0], loops, last, cmd);
        return [x](const Frame &f) { return x(f).neg(); };
      }
      break;
    case ast::ExprOp::Binary: {
      if (e.binop != ast::BinOp::Add && e.binop != ast::BinOp::Sub && e.binop != ast::BinOp::Mul) break;
      if (e.binop == ast::BinOp::Mul && !constantOf(*e.kids[0]) && !constantOf(*e.kids[1])) throw notAffine();
      Value x = islOf(*e.kids[0], loops, last, cmd), y = islOf(*e.kids[1], loops, last, cmd);
      ast::BinOp op = e.binop;
      return [x, y, op](const Frame &f) {
        return op == ast::BinOp::Add ? x(f).add(y(f)) : op == ast::BinOp::Sub ? x(f).sub(y(f)) : x(f).mul(y(f));
      };
    }
    default: break;
  }
  throw notAffine();
}

std::string nameArg(const tir::CommandBase &c, const tir::NameArg &a, size_t k) {
  if (!a.ok) throw CompileError(a.loc, fmt::format("{}: argument {} must name a loop", c.name, k + 1));
  return a.text;
}

int64_t intArg(const tir::CommandBase &c, const tir::CountArg &a, size_t k) {
  if (!a.ok) throw CompileError(a.loc, fmt::format("{}: argument {} must be a positive integer", c.name, k + 1));
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

/// The frames of the script: the dense space [n, m] -> { [i0, j0] } and the parameter space
/// [n, m, i0, j0].
Frame denseFrame(isl::ctx ctx) {
  isl::space space = isl::space::unit(ctx).add_param("n").add_param("m").add_unnamed_tuple(2);
  // The dimensions' names show in messages (isl's C++ interface cannot set them: the C call).
  space = isl::manage(isl_space_set_dim_name(space.release(), isl_dim_set, 0, "i0"));
  space = isl::manage(isl_space_set_dim_name(space.release(), isl_dim_set, 1, "j0"));
  isl::set domain = isl::set::universe(space);
  isl::multi_aff id = isl::multi_aff::identity_on_domain(domain.space());
  return {domain, isl::pw_aff(id.at(0)), isl::pw_aff(id.at(1))};
}

Frame paramFrame(isl::ctx ctx) {
  isl::set domain = isl::set::universe(isl::space::unit(ctx).add_param("n").add_param("m").add_param("i0").add_param("j0"));
  return {domain, isl::pw_aff::param_on_domain(domain, isl::id(ctx, "i0")),
          isl::pw_aff::param_on_domain(domain, isl::id(ctx, "j0"))};
}

/// The parameter set where each of `names` (parameters of `f`) is at least `least`.
isl::set paramsAtLeast(const Frame &f, const std::vector<std::string> &names, long least) {
  isl::set out = f.domain;
  for (const std::string &p : names)
    out = out.intersect(isl::pw_aff::param_on_domain(f.domain, isl::id(f.domain.ctx(), p)).ge_set(f.constant(least)));
  return out.params();
}

/// An isl error in the inspector's derivation: the quota is the script's (a CompileError at
/// it), anything else a compiler bug.
[[noreturn]] void islFailure(const IslContext &ctx, const isl::exception &e, SourceLoc loc, const std::string &what) {
  if (ctx.quotaExceeded(e)) throw CompileError(loc, "inspector: " + IslContext::quotaReason(what));
  throw InternalError("inspector: isl failed " + what + ": " + e.what());
}

/// A piecewise affine expression of the parameters as a Nat (one piece under the context).
Nat natOfPwAff(const isl::pw_aff &pa, const isl::set &context, const std::map<std::string, Nat> &ids, SourceLoc loc,
               const std::string &what) {
  std::optional<Nat> n;
  try {
    n = natOfAstExpr(isl::ast_build::from_context(context).expr_from(pa), ids);
  } catch (const isl::exception_quota &) {
    throw CompileError(loc, "inspector: " + IslContext::quotaReason("for " + what));
  } catch (const isl::exception &) {
  }
  if (!n) throw CompileError(loc, "inspector: isl gives no closed form for " + what);
  return *n;
}

/// The bounds of every loop over the image of the dense space, and each loop as a Nat of the
/// source's row and column.
void boundsAndExpressions(const isl::set &image, const std::vector<Loop> &loops, const std::map<std::string, Nat> &sizes,
                          const isl::set &paramsContext, NatVarId row, NatVarId column, InspectorLayout &out) {
  Frame dense = denseFrame(image.ctx()), params = paramFrame(image.ctx());
  // A padded loop (inside the compacted one) spans its extent on a large enough matrix: a
  // tile's rows are b wide even when the matrix has fewer (the padding is then zeros).
  isl::set large = paramsAtLeast(dense, {"n", "m"}, 1048576);
  isl::set rowColumn = paramsAtLeast(params, {"i0", "j0"}, 0);
  for (size_t k = 0; k < loops.size(); ++k) {
    out.dims.push_back(loops[k].name);
    const isl::set &context = k > out.compacted ? large : paramsContext;
    // (isl's C++ interface has no set::dim_min / dim_max giving expressions: the C calls,
    // ownership through manage)
    isl::pw_aff lo = isl::manage(isl_set_dim_min(image.copy(), static_cast<int>(k))).gist_params(context);
    isl::pw_aff hi = isl::manage(isl_set_dim_max(image.copy(), static_cast<int>(k))).gist_params(context);
    out.lo.push_back(natOfPwAff(lo, context, sizes, out.compactLoc, "the lower bound of loop " + loops[k].name));
    out.hi.push_back(natOfPwAff(hi, context, sizes, out.compactLoc, "the upper bound of loop " + loops[k].name));
    std::map<std::string, Nat> ids = sizes;
    ids.emplace("i0", Nat::var(row));
    ids.emplace("j0", Nat::var(column));
    out.dimOf.push_back(natOfPwAff(loops[k].value(params), rowColumn, ids, out.compactLoc, "loop " + loops[k].name));
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
  out.row = row;
  out.column = column;
  bool compacted = false;
  for (const tir::ScriptCommand &command : script) {
    const tir::CommandBase &base = tir::commandBase(command);
    if (compacted) throw CompileError(base.loc, "inspector: " + base.name + " after the compaction (compact or compact_and_pad ends the script)");
    if (const auto *c = std::get_if<tir::MakeDense>(&command)) {
      if (!loops.empty()) throw CompileError(c->loc, "inspector: make_dense appears twice");
      if (c->arity != 2) throw CompileError(c->loc, "make_dense takes the names of the row and the column loops: make_dense(i, j)");
      std::string i = nameArg(*c, c->row, 0), j = nameArg(*c, c->column, 1);
      if (i == j) throw CompileError(c->column.loc, "make_dense: the row and column loops need two names");
      loops = {{i, [](const Frame &f) { return f.i0; }}, {j, [](const Frame &f) { return f.j0; }}};
    } else if (const auto *c = std::get_if<tir::Skew>(&command)) {
      if (c->arity != 2) throw CompileError(c->loc, "skew takes a new loop name and its expression: skew(d, j - i)");
      std::string d = nameArg(*c, c->loop, 0);
      checkFresh(loops, d, *c, c->loop.loc);
      int last = -1;
      auto value = islOf(*c->offset, loops, last, "skew");
      if (last < 0) throw CompileError(c->offsetLoc, "skew: the expression mentions no loop");
      loops[last] = {d, value};
    } else if (const auto *c = std::get_if<tir::ReorderLoops>(&command)) {
      if (c->arity != loops.size())
        throw CompileError(c->loc, fmt::format("reorder: name every loop once ({} loops)", loops.size()));
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
      auto tileOf = [](const Loop &l, int64_t s) {
        return [v = l.value, s](const Frame &f) { return v(f).scale_down(s).floor(); };
      };
      auto pointOf = [](const Loop &l, int64_t s) {
        return [v = l.value, s](const Frame &f) { return v(f).sub(v(f).scale_down(s).floor().scale(s)); };
      };
      std::vector<Loop> repl = {{ta, tileOf(la, sa)}, {tb, tileOf(lb, sb)}, {la.name, pointOf(la, sa)}, {lb.name, pointOf(lb, sb)}};
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
    throw CompileError(out.compactLoc,
                       fmt::format("inspector: at most one loop may lie outside the compacted one (found {})", out.compacted));

  IslContext ctx;
  // The transformation on the matrix: { [i0, j0] -> [loops] : 0 <= i0 < n and 0 <= j0 < m }.
  isl::map map;
  bool injective = false;
  try {
    Frame dense = denseFrame(ctx.ctx());
    isl::multi_pw_aff image(loops[0].value(dense));
    for (size_t k = 1; k < loops.size(); ++k) image = image.flat_range_product(isl::multi_pw_aff(loops[k].value(dense)));
    isl::pw_aff rows = isl::pw_aff::param_on_domain(dense.domain, isl::id(ctx.ctx(), "n"));
    isl::pw_aff columns = isl::pw_aff::param_on_domain(dense.domain, isl::id(ctx.ctx(), "m"));
    isl::set matrix = dense.constant(0).le_set(dense.i0).intersect(dense.i0.lt_set(rows))
                          .intersect(dense.constant(0).le_set(dense.j0)).intersect(dense.j0.lt_set(columns));
    map = image.as_map().intersect_domain(matrix);
    out.mapText = islText(map);
    // Injective on the dense space: then slots collide only where the source stores one (row,
    // column) twice, which the inspector checks at run time.
    injective = map.is_injective();
  } catch (const isl::exception &e) {
    islFailure(ctx, e, out.compactLoc, "building and proving the transformation injective");
  }
  if (!injective)
    throw CompileError(out.compactLoc, "inspector: the transformation maps two matrix entries to one slot (isl: `" +
                                           out.mapText + "` is not injective)");
  std::map<std::string, Nat> sizes = {{"n", n}, {"m", m}};
  try {
    isl::set paramsContext = paramsAtLeast(denseFrame(ctx.ctx()), {"n", "m"}, 1);
    boundsAndExpressions(map.range().intersect_params(paramsContext), loops, sizes, paramsContext, row, column, out);
  } catch (const isl::exception &e) {
    islFailure(ctx, e, out.compactLoc, "bounding the loops");
  }
  if (out.compacted == 1) {
    if (out.dimOf[0].mentions(column.id))
      throw CompileError(out.compactLoc, "inspector: the loop outside the compacted one (" + loops[0].name +
                                             ") must depend on the row only: rows are gathered by their outer point");
    if (out.lo[0] != Nat(0))
      throw CompileError(out.compactLoc, "inspector: the outer loop " + loops[0].name + " must start at 0");
  }
  return out;
}

cin::StmtP generateInspectorLoops(const InspectorLayout &layout, const std::vector<InspectorPhase> &phases, const Nat &n,
                                  const Nat &m, const std::string &rowName, SourceLoc loc) {
  // Schedule: [pass, outer, order, row] with an outer loop, [pass, order, row] without.
  bool outer = layout.compacted == 1;
  IslContext ctx;
  IslParams names(ctx.ctx(), {layout.row.id});
  using D = IslParams::Declared;
  D rowsHow = names.declareInvariant(n), outerHow = outer ? names.declare(layout.dimOf[0]) : D::Affine;
  if (rowsHow == D::No || outerHow == D::No) throw InternalError("inspector: the phase loops' bounds are not affine");
  auto constant = [&](const IslParams::Domain &d, int c) { return names.affine(Nat(c), D::Affine, d); };
  /// { domain -> [dims] }
  auto scheduleOf = [](const std::vector<isl::pw_aff> &dims, const isl::set &domain) {
    isl::multi_pw_aff x(dims[0]);
    for (size_t k = 1; k < dims.size(); ++k) x = x.flat_range_product(isl::multi_pw_aff(dims[k]));
    return x.as_map().intersect_domain(domain);
  };
  isl::ast_node ast;
  try {
    isl::union_map schedule = isl::union_map::empty(ctx.ctx());
    for (size_t q = 0; q < phases.size(); ++q) {
      const InspectorPhase &p = phases[q];
      std::string s = "S" + std::to_string(q);
      IslParams::Domain d = names.domain(s, {layout.row.id});
      isl::set rows = d.set.intersect(names.range(d, layout.row.id, Nat(0), D::Affine, n, rowsHow));
      switch (p.domain) {
        case InspectorPhase::PerRow: {
          isl::pw_aff i0 = IslParams::dim(d, layout.row.id);
          schedule = schedule.unite(isl::union_map(
              outer ? scheduleOf({constant(d, p.pass), names.affine(layout.dimOf[0], outerHow, d), constant(d, p.order), i0}, rows)
                    : scheduleOf({constant(d, p.pass), constant(d, p.order), i0}, rows)));
          break;
        }
        case InspectorPhase::PerOuter: {
          if (!outer) throw InternalError("inspector: a per-outer phase without an outer loop");
          // The outer points the rows reach: { S[o] : exists i0 : 0 <= i0 < n and o = outer(i0) }.
          isl::set points = isl::multi_pw_aff(names.affine(layout.dimOf[0], outerHow, d)).as_map().intersect_domain(rows).range();
          IslParams::Domain at{isl::set::universe(points.space()), {}};
          isl::pw_aff o(isl::multi_aff::identity_on_domain(points.space()).at(0));
          isl::map piece = scheduleOf({constant(at, p.pass), o, constant(at, p.order), constant(at, 0)}, points);
          schedule = schedule.unite(isl::union_map(piece.set_domain_tuple(s)));
          break;
        }
        case InspectorPhase::Once: {
          if (outer) throw InternalError("inspector: a once phase beside an outer loop");
          IslParams::Domain once = names.domain(s, {});
          schedule = schedule.unite(isl::union_map(scheduleOf({constant(once, p.pass), constant(once, p.order), constant(once, 0)}, once.set)));
          break;
        }
      }
    }
    ast = isl::ast_build::from_context(names.context()).node_from_schedule_map(schedule);
  } catch (const isl::exception &e) {
    islFailure(ctx, e, loc, "building the phase loops");
  }
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
      names.meanings(),
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
  if (!s) throw InternalError("inspector: " + why);
  return *s;
}

}  // namespace spl::poly
