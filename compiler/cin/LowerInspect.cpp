/// \file LowerInspect.cpp: an exported `inspect(A)` as the PLDI'15 inspector of its script.
///
/// Takes:      the export (a def `(A: S) : R = inspect(A)` whose S has a dense level of rows over
///             a compressed level, CSR or LIL), its schedule block (the script) and the layout
///             poly/Inspector derives from it.
/// Gives:      the kernel that converts A into R (or, for NAME_size, the sizes of R's outputs).
///             Its phases, run in the loops isl generates (InspectorPlanner::loops, poly's isl):
///             - mark: every entry's compacted coordinate x is marked in a marker array over x's
///               range; with an outer loop, marked per outer point and numbered at their first
///               appearance (the slot), their coordinates kept in that order;
///             - without an outer loop, one pass over the marked range numbers the slots in
///               increasing x (DIA's diagonals come out sorted);
///             - emit: an outer point's slots get their coordinates and zeroed blocks (padding
///               slots: coordinate 0); compact writes the offsets, compact_and_pad pads to the
///               longest outer point (found in a pass of its own);
///             - fill: each entry's value goes to [outer, slot, inner loops - their lower bound];
///             - reset: the outer point's marks are cleared by revisiting its rows (so a marker
///               costs its range once, not once per outer point).
///             The run-time injectivity check: in the first mark, an entry whose column is out of
///             [0, m) or repeats one of its row makes the kernel return SPL_ERR_BAD_INPUT (isl
///             proved the rest of the transformation injective).
/// Assumes:    the result type R was declared; it is checked here against the layout.
/// Fails:      CompileError at the def or the script when they do not fit.
#include <functional>
#include <variant>

#include "cin/InspectorPlan.h"
#include "cin/LevelFormat.h"
#include "cin/LowerCommon.h"
#include "support/Error.h"

namespace spl::cin {
namespace lower {

namespace {

std::shared_ptr<Tensor> newTensor(Tensor::Kind kind, const std::string &name, TypeP type) {
  return makeTensor(kind, freshNatVar(name).id, name, std::move(type));
}

StmtP failBadInput(SourceLoc loc) { return failWith(1 /* SPL_ERR_BAD_INPUT */, loc); }

ExprP i64(const Nat &n) { return natExpr(n); }
ExprP lt(ExprP a, ExprP b) { return binary(ast::BinOp::Lt, std::move(a), std::move(b), Scalar::Bool); }
ExprP ge(ExprP a, ExprP b) { return binary(ast::BinOp::Ge, std::move(a), std::move(b), Scalar::Bool); }
ExprP add(ExprP a, ExprP b) { return binary(ast::BinOp::Add, std::move(a), std::move(b), Scalar::I64); }

}  // namespace

Kernel Lowerer::lowerInspectBody(const tir::Expr &body, const Env &env, const TypeP &rt, std::vector<KernelParam> &params,
                                 const std::vector<size_t> &outs) {
  const SourceLoc loc = body.loc;
  if (opts_.cuda) throw CompileError(loc, "inspect: inspectors run on the host; export the conversion for cpu only");
  if (!opts_.inspectScript)
    throw CompileError(loc, "inspect needs its script: `schedule " + ex_.cname +
                                " for cpu { make_dense(i, j); ...; compact(x); }` (see docs/polyhedral.md)");
  internal_assert(opts_.inspector) << "lowering: an inspector export without the polyhedral planner (LowerOptions::inspector)";

  // The source: dense rows over a compressed level.
  const ValP &pair = env.vals.at(body.args[0]->var->id);
  const ValP &rows = pair->second;
  const TensorP src = rows->tensor;
  std::vector<Level> levels = levelsOf(rows->type);
  if (levels.size() < 2 || levels[0].format->name() != "dense" || levels[1].format->name() != "compressed" ||
      levels[1].format->coordinateCount(*levels[1].type) != 1)
    throw CompileError(body.args[0]->loc, "inspect converts dense rows over a compressed level (csr, lil), not `" +
                                              types::str(rows->type) + "` (" + formatNames(rows->type) + ")");
  TypeP valueType = levels[1].format->childShape(*levels[1].type);
  if (!valueType || valueType->kind != TypeKind::Scalar)
    throw CompileError(body.args[0]->loc, "inspect: the source's entries must hold one scalar value and one column");
  const Scalar vs = scalarOf(valueType);
  const Nat n = rows->type->len;
  Nat m;
  for (const TypeP &c : levels[1].type->elems[0]->elems)
    if (c->kind == TypeKind::Idx) m = c->len;

  NatVarId rowV = freshNatVar("row"), colV = freshNatVar("col");
  const InspectorLayout lay = opts_.inspector->layout(opts_.inspectScript->script, opts_.inspectScript->loc, n, m, rowV, colV);
  const size_t c = lay.compacted;
  const bool outer = c == 1;
  const bool ragged = outer && !lay.pad;
  const Nat coordLo = lay.lo[c], range = Nat::max(lay.hi[c] - lay.lo[c] + Nat(1), Nat(1));
  const Nat outerCount = outer ? lay.hi[0] + Nat(1) : Nat(1);
  std::vector<Nat> innerExtent;
  Nat innerSize(1);
  for (size_t k = c + 1; k < lay.dims.size(); ++k) {
    innerExtent.push_back(lay.hi[k] - lay.lo[k] + Nat(1));
    innerSize = innerSize * innerExtent.back();
  }

  // The declared result against the layout.
  auto mismatch = [&](const std::string &what) {
    throw CompileError(ex_.def->loc, "inspect: the declared result `" + types::str(rt) + "` does not fit the script: " + what);
  };
  if (rt->kind != TypeKind::DepPair) mismatch("the result is a dependent pair (its slot count is found at run time)");
  if (rt->pairOverNats != ragged)
    mismatch(ragged ? "compact gives ragged slots per outer point: declare `(offs: nats ** ...)`"
                    : "the slots have one count: declare `(k: nat ** ...)`");

  // The statements go into the kernel's block (opened by run(), holding the --checked input
  // validation): lowerEinsumBody does the same.
  const int64_t slotsLocal = newLocal("slots", Scalar::I64, constInt(0));  // w, nd, or the total
  const int64_t countLocal = newLocal("count", Scalar::I64, constInt(0));
  const Nat slots = Nat::value(NatVarId{slotsLocal, "slots"});
  ExprP count = local(countLocal, Scalar::I64);

  TensorP outNat, outNats;
  NatSubst bind;
  if (!opts_.sizeFunction) {
    if (ragged) {
      auto t = newTensor(Tensor::Output, params[outs.at(0)].abi.name, types::array(outerCount + Nat(1), types::idx(Nat(0))));
      t->isIndexArray = true;
      outNats = t;
      bind.arrays.emplace(rt->binder.id, NatVarId{t->id, t->name});
    } else {
      outNat = newTensor(Tensor::Output, params[outs.at(0)].abi.name, types::scalar(ScalarKind::I64));
      bind.vars.emplace(rt->binder.id, slots);
    }
  } else if (!ragged) {
    bind.vars.emplace(rt->binder.id, slots);
  }
  TypeP dataType = types::substitute(rt->elems[0], bind);

  // Shape check: [outer.] slots . (block, coordinate).
  TypeP slotLevel = dataType;
  if (outer) {
    if (dataType->kind != TypeKind::Array || dataType->len != outerCount)
      mismatch("its outer level must have " + outerCount.str() + " entries (loop " + lay.dims[0] + ")");
    slotLevel = dataType->elems[0];
  }
  if (slotLevel->kind != TypeKind::Array) mismatch("the slots must be an array level");
  if (!ragged && !opts_.sizeFunction && slotLevel->len != slots) mismatch("the slot level's length must be the pair's nat");
  const TypeP &entry = slotLevel->elems[0];
  if (entry->kind != TypeKind::Tuple || entry->elems.size() != 2)
    mismatch("each slot holds a tuple (values, coordinate of loop " + lay.dims[c] + ")");
  TypeP values = entry->elems[0];
  for (size_t k = 0; k < innerExtent.size(); ++k) {
    if (values->kind != TypeKind::Array || values->len != innerExtent[k])
      mismatch("the values of a slot are indexed by loop " + lay.dims[c + 1 + k] + " over " + innerExtent[k].str() + " entries");
    values = values->elems[0];
  }
  if (values->kind != TypeKind::Scalar || scalarOf(values) != vs) mismatch("the values must have the source's scalar type");
  const TypeP &coordType = entry->elems[1];
  if (coordType->kind != TypeKind::Idx && !(coordType->kind == TypeKind::Scalar && (scalarOf(coordType) == Scalar::I32 || scalarOf(coordType) == Scalar::I64)))
    mismatch("the coordinate of a slot must be an idx or an integer");
  const Scalar coordScalar = coordType->kind == TypeKind::Idx ? Scalar::I64 : scalarOf(coordType);

  TensorP data;
  if (!opts_.sizeFunction) {
    data = newTensor(Tensor::Output, "out", dataType);
    for (size_t k = 1; k < outs.size(); ++k) params[outs[k]].tensor = data;
    params[outs[0]].tensor = ragged ? outNats : outNat;
    kernel_.tensors.push_back(ragged ? outNats : outNat);
    kernel_.tensors.push_back(data);
  }

  // Temporaries: the marks over the compacted coordinate's range, the rows that last used each
  // column (the duplicate check), the coordinates of an outer point's slots in order.
  auto temp = [&](const std::string &name, const Nat &len) {
    auto t = newTensor(Tensor::Temp, name, types::array(len, types::scalar(ScalarKind::I64)));
    kernel_.tensors.push_back(t);
    auto marker = std::make_shared<Stmt>();
    marker->kind = StmtKind::Alloc;
    marker->tensor = t;
    emit(marker);
    return TensorP(t);
  };
  TensorP marks = temp("marks", range), lastRow = temp("last_row", Nat::max(m, Nat(1)));
  TensorP coords = outer ? temp("slot_coords", range) : nullptr;
  loop("x", Nat(0), range, ForallKind::Parallel, [&](const Nat &x) { emit(assign(access(marks, {x}, {}, Scalar::I64), constInt(-1))); });
  loop("j", Nat(0), Nat::max(m, Nat(1)), ForallKind::Parallel,
       [&](const Nat &j) { emit(assign(access(lastRow, {j}, {}, Scalar::I64), constInt(-1))); });
  if (outNats) emit(assign(access(outNats, {Nat(0)}, {}, Scalar::I64), constInt(0)));

  // Each entry of row i: its column, value and place in the layout.
  struct Entry {
    Nat column;
    ExprP value;
    Nat markIndex;           // x - lo
    std::vector<Nat> inner;  // the inner loops less their lower bounds
  };
  auto atRow = [&](const Nat &i, const Nat &col) {
    NatSubst at;
    at.vars.emplace(rowV.id, i);
    at.vars.emplace(colV.id, col);
    return at;
  };
  auto forEntries = [&](const Nat &i, const std::function<void(const Entry &)> &f) {
    LevelPosition start{src, rows->type, {}, {}};
    LevelPosition row = levels[0].format->locate(start, {i});
    levels[1].format->iterate(*this, row, "k", ForallKind::Serial, [&](const LevelPosition &child, const std::vector<Nat> &cs) {
      NatSubst at = atRow(i, cs[0]);
      Entry e{cs[0], access(child.tensor, child.prefix, child.leaf, vs), substitute(lay.dimOf[c], at) - coordLo, {}};
      for (size_t k = c + 1; k < lay.dims.size(); ++k) e.inner.push_back(substitute(lay.dimOf[k], at) - lay.lo[k]);
      f(e);
    });
  };
  auto perRow = [&](const std::function<void(const Nat &, const Entry &)> &f) {
    return [this, f, &forEntries](const Nat &i) {
      pushBlock();
      forEntries(i, [&](const Entry &e) { f(i, e); });
      return popBlock();
    };
  };
  auto perPoint = [this](const std::function<void(const Nat &)> &f) {
    return [this, f](const Nat &o) {
      pushBlock();
      f(o);
      return popBlock();
    };
  };
  auto markOf = [&](const Entry &e) { return access(marks, {e.markIndex}, {}, Scalar::I64); };
  const Nat countNat = Nat::value(NatVarId{countLocal, "count"});

  // mark: with `check`, the run-time injectivity check first (columns in range, none twice in
  // a row: isl proved every other step injective).
  auto mark = [&](bool check) {
    return perRow([&, check](const Nat &i, const Entry &e) {
      if (check) {
        ExprP j = i64(e.column);
        emit(ifThen(binary(ast::BinOp::Or, lt(j, constInt(0)), ge(j, i64(m)), Scalar::Bool), failBadInput(loc)));
        ExprP last = access(lastRow, {e.column}, {}, Scalar::I64);
        emit(ifThen(binary(ast::BinOp::Eq, last, i64(i), Scalar::Bool), failBadInput(loc)));
        emit(assign(last, i64(i)));
      }
      if (!outer) {
        emit(assign(markOf(e), constInt(1)));
        return;
      }
      emit(ifThen(lt(markOf(e), constInt(0)),
                  block({assign(markOf(e), count),
                         assign(access(coords, {countNat}, {}, Scalar::I64), add(i64(e.markIndex), i64(coordLo))),
                         setLocal(countLocal, add(count, constInt(1)), Scalar::I64)})));
    });
  };
  auto reset = perRow([&](const Nat &, const Entry &e) { emit(assign(markOf(e), constInt(-1))); });
  // The values of slot `slot` (below `prefix`) zeroed, its coordinate set.
  auto emitSlot = [&](std::vector<Nat> prefix, const Nat &slot, const ExprP &coordinate) {
    prefix.push_back(slot);
    emit(assign(access(data, prefix, {1}, coordScalar), coordScalar == Scalar::I64 ? coordinate : convert(coordinate, coordScalar)));
    std::function<void(std::vector<Nat>, size_t)> zero = [&](std::vector<Nat> idx, size_t k) {
      if (k == innerExtent.size()) {
        emit(assign(access(data, idx, {0}, vs), vs == Scalar::F32 || vs == Scalar::F64 ? constFloat(0, vs) : constInt(0, vs)));
        return;
      }
      loop(lay.dims[c + 1 + k], Nat(0), innerExtent[k], ForallKind::Serial, [&](const Nat &r) {
        auto next = idx;
        next.push_back(r);
        zero(next, k + 1);
      });
    };
    zero(prefix, 0);
  };
  auto fill = perRow([&](const Nat &i, const Entry &e) {
    int64_t slotLocal = newLocal("slot", Scalar::I64, markOf(e));
    std::vector<Nat> idx;
    if (outer) idx.push_back(substitute(lay.dimOf[0], atRow(i, e.column)));
    idx.push_back(Nat::value(NatVarId{slotLocal, "slot"}));
    for (const Nat &r : e.inner) idx.push_back(r);
    emit(assign(access(data, idx, {0}, vs), e.value));
  });
  auto beginPoint = perPoint([&](const Nat &) { emit(setLocal(countLocal, constInt(0), Scalar::I64)); });
  const bool sizes = opts_.sizeFunction;

  using Phase = InspectorPhase;
  std::vector<Phase> phases;
  if (!outer) {
    // DIA-like: mark everything, number the marked range in order, zero the slots, fill.
    phases.push_back({Phase::PerRow, 0, 0, mark(true)});
    phases.push_back({Phase::Once, 1, 0, [&](const Nat &) {
                        pushBlock();
                        loop("x", Nat(0), range, ForallKind::Serial, [&](const Nat &x) {
                          ExprP mk = access(marks, {x}, {}, Scalar::I64);
                          std::vector<StmtP> then = {assign(mk, local(slotsLocal, Scalar::I64))};
                          if (!sizes) {
                            pushBlock();
                            emitSlot({}, slots, add(i64(x), i64(coordLo)));
                            then.push_back(popBlock());
                          }
                          then.push_back(setLocal(slotsLocal, add(local(slotsLocal, Scalar::I64), constInt(1)), Scalar::I64));
                          emit(ifThen(ge(mk, constInt(0)), block(then)));
                        });
                        return popBlock();
                      }});
    if (!sizes) phases.push_back({Phase::PerRow, 2, 0, fill});
  } else if (ragged) {
    // BCSR-like: per outer point, mark and number its slots, write its offsets, coordinates and
    // zeroed blocks, fill, clear its marks.
    phases.push_back({Phase::PerOuter, 0, 0, beginPoint});
    phases.push_back({Phase::PerRow, 0, 1, mark(true)});
    phases.push_back({Phase::PerOuter, 0, 2, perPoint([&](const Nat &o) {
                        emit(setLocal(slotsLocal, add(local(slotsLocal, Scalar::I64), count), Scalar::I64));
                        if (sizes) return;
                        emit(assign(access(outNats, {o + Nat(1)}, {}, Scalar::I64), add(access(outNats, {o}, {}, Scalar::I64), count)));
                        loop("s", Nat(0), countNat, ForallKind::Serial,
                             [&](const Nat &s) { emitSlot({o}, s, access(coords, {s}, {}, Scalar::I64)); });
                      })});
    if (!sizes) phases.push_back({Phase::PerRow, 0, 3, fill});
    phases.push_back({Phase::PerRow, 0, 4, reset});
  } else {
    // ELL-like: a first pass finds the longest outer point, a second one writes them padded.
    phases.push_back({Phase::PerOuter, 0, 0, beginPoint});
    phases.push_back({Phase::PerRow, 0, 1, mark(true)});
    phases.push_back({Phase::PerOuter, 0, 2, perPoint([&](const Nat &) {
                        emit(setLocal(slotsLocal, minmax(true, local(slotsLocal, Scalar::I64), count, Scalar::I64), Scalar::I64));
                      })});
    phases.push_back({Phase::PerRow, 0, 3, reset});
    if (!sizes) {
      phases.push_back({Phase::PerOuter, 1, 0, beginPoint});
      phases.push_back({Phase::PerRow, 1, 1, mark(false)});
      phases.push_back({Phase::PerOuter, 1, 2, perPoint([&](const Nat &o) {
                          loop("s", Nat(0), slots, ForallKind::Serial, [&](const Nat &s) {
                            emitSlot({o}, s,
                                     select(lt(i64(s), count), access(coords, {s}, {}, Scalar::I64), constInt(0), Scalar::I64));
                          });
                        })});
      phases.push_back({Phase::PerRow, 1, 3, fill});
      phases.push_back({Phase::PerRow, 1, 4, reset});
    }
  }
  const std::string rowName = std::get<tir::MakeDense>(opts_.inspectScript->script[0]).row.text;  // make_dense(i, j): layout checked it
  emit(opts_.inspector->loops(lay, phases, n, m, rowName, loc));

  if (sizes) {
    // The element count of each output pointer, in ABI order.
    Nat total = ragged ? slots : outerCount * slots;
    std::vector<Nat> counts;
    for (size_t k : outs) {
      const tir::AbiParam &ap = abi_.params[k];
      if (ap.role == tir::AbiParam::OutNat) counts.push_back(Nat(1));
      else if (ap.role == tir::AbiParam::OutNats) counts.push_back(outerCount + Nat(1));
      else counts.push_back(!ap.path.empty() && ap.path.back() == 0 ? total * innerSize : total);
    }
    auto st = newTensor(Tensor::Output, "sizes", types::array(Nat(static_cast<int64_t>(counts.size())), types::scalar(ScalarKind::I64)));
    kernel_.tensors.push_back(st);
    for (size_t j = 0; j < counts.size(); ++j)
      emit(assign(access(st, {Nat(static_cast<int64_t>(j))}, {}, Scalar::I64), natExpr(counts[j])));
    kernel_.outputSizes = counts;
    kernel_.params = sizeFunctionParams(params, st);
  } else {
    if (outNat) emit(assign(access(outNat, {}, {}, Scalar::I64), local(slotsLocal, Scalar::I64)));
    kernel_.params = params;
  }
  kernel_.body = popBlock();
  return kernel_;
}

}  // namespace lower
}  // namespace spl::cin
