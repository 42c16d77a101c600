/// \file LowerFunctional.cpp: the functional primitives -> concrete index notation.
/// A reduce over tuples whose combination couples the accumulators (argmax) is lowered in
/// vectorisable lanes of partial accumulators (accumulateInLanes).
///
/// Values are evaluated to symbolic Vals: scalars are CIN expressions; arrays are *views*
/// (a length, a type, and an element function) so that maps, zips, splits, transposes and
/// generates fuse into their consumer with no intermediate storage, as in Lift/Rise. Sources
/// that can only be produced in order (scan, which, a join of ragged rows) are *producers*: a
/// function that emits the loop and calls back with each (position, element). Results are
/// written into tensors by `write`, which walks the value and emits the loops; positions of
/// joins and splits become index arithmetic on the output (a Sigma for ragged rows).
/// Statements are emitted into the current block while evaluating, so a `reduce` inside a map's
/// function lands inside the loop that consumes the map.
#include <algorithm>
#include <functional>
#include <map>

#include "cin/Lower.h"
#include "support/Error.h"
#include "cin/LowerCommon.h"

namespace spl::cin {
namespace lower {

// ---- blocks -----------------------------------------------------------------------------------

void Lowerer::pushBlock() { blocks_.emplace_back(); }

StmtP Lowerer::popBlock() {
  std::vector<StmtP> stmts = std::move(blocks_.back());
  blocks_.pop_back();
  // A temporary allocated in a block lives until the end of the block: nest the statements
  // after its marker into the Alloc.
  for (size_t i = stmts.size(); i-- > 0;) {
    if (stmts[i]->kind == StmtKind::Alloc && stmts[i]->body.empty()) {
      std::vector<StmtP> rest(stmts.begin() + i + 1, stmts.end());
      StmtP a = allocTemp(stmts[i]->tensor, block(std::move(rest)));
      stmts.resize(i);
      stmts.push_back(a);
    }
  }
  return block(std::move(stmts));
}

void Lowerer::loop(const std::string &name, const Nat &lo, const Nat &hi, ForallKind kind,
                   const std::function<void(const Nat &)> &body, SourceLoc loc) {
  if (hi == lo) return;
  if (producerOrder_ && kind != ForallKind::Serial) kind = *producerOrder_;
  NatVarId v = freshNatVar(name);
  pushBlock();
  body(Nat::var(v));
  StmtP b = popBlock();
  emit(forall(v.id, name, lo, hi, b, kind, loc));
}

int64_t Lowerer::newLocal(const std::string &name, Scalar t, ExprP init) {
  int64_t id = freshNatVar(name).id;
  emit(declLocal(id, name, t, std::move(init)));
  return id;
}

// ---- types ------------------------------------------------------------------------------------

TypeP Lowerer::kt(const TypeP &t, const Env &env) const {
  return tir::substituteTypeVars(types::substitute(t, env.nats), env.typeArgs);
}

Scalar Lowerer::sk(const TypeP &t, const Env &env) const {
  TypeP k = kt(t, env);
  if (k->kind == TypeKind::Scalar) return k->scalar;
  if (k->kind == TypeKind::Idx) return Scalar::I64;
  internal_error_at(SourceLoc{}) << "expected a scalar type, found `" << types::str(k) << "`";
  return Scalar::I64;
}

// ---- values -----------------------------------------------------------------------------------

ValP Lowerer::scalarVal(ExprP e) {
  auto v = std::make_shared<Val>();
  v->kind = Val::Scalar;
  v->scalar = std::move(e);
  return v;
}

ValP Lowerer::tupleVal(std::vector<ValP> parts) {
  auto v = std::make_shared<Val>();
  v->kind = Val::Tuple;
  v->parts = std::move(parts);
  return v;
}

std::shared_ptr<Val> Lowerer::arrayVal(const TypeP &type) {
  auto v = std::make_shared<Val>();
  v->kind = Val::Array;
  v->type = type;
  v->len = type->len;
  v->loopKind = ForallKind::Parallel;
  return v;
}

ValP Lowerer::tensorView(const TensorP &t, const TypeP &type, std::vector<Nat> prefix, std::vector<int> leaf) {
  switch (type->kind) {
    case TypeKind::Scalar:
    case TypeKind::Idx: return scalarVal(access(t, std::move(prefix), std::move(leaf), scalarOf(type)));
    case TypeKind::Tuple: {
      std::vector<ValP> parts;
      for (size_t k = 0; k < type->elems.size(); ++k) {
        auto l = leaf;
        l.push_back(static_cast<int>(k));
        parts.push_back(tensorView(t, type->elems[k], prefix, l));
      }
      return tupleVal(std::move(parts));
    }
    case TypeKind::Array: {
      auto a = arrayVal(type);
      a->tensor = t;
      a->prefix = prefix;
      a->leaf = leaf;
      a->elem = [this, t, type, prefix, leaf](const Nat &i) {
        auto p = prefix;
        p.push_back(i);
        return tensorView(t, types::elementAt(*type, i), p, leaf);
      };
      return a;
    }
    default:
      throw CompileError(SourceLoc{}, "not supported yet: a tensor of type `" + types::str(type) + "`");
  }
}

Nat Lowerer::natOf(const ValP &v) {
  const ExprP &e = v->scalar;
  if (e->kind == ExprKind::NatE) return e->nat;
  if (e->kind == ExprKind::Const) return Nat(e->ival);
  if (e->kind == ExprKind::Local) return Nat::value(NatVarId{e->local, "%" + std::to_string(e->local)});
  if (std::optional<Nat> n = foldNat(e)) return *n;
  int64_t id = newLocal("t", Scalar::I64, convert(e, Scalar::I64));
  return Nat::value(NatVarId{id, "%" + std::to_string(id)});
}

bool Lowerer::trivial(const ExprP &e) {
  return e->kind == ExprKind::Const || e->kind == ExprKind::Local || e->kind == ExprKind::NatE ||
         e->kind == ExprKind::Access;
}

void Lowerer::bindValue(Env &env, const tir::VarP &var, ValP x) {
  if (x->kind == Val::Scalar) {
    Scalar t = x->scalar->type;
    bool integer = t == Scalar::I32 || t == Scalar::I64;
    // A position computed from positions (a band's first column, max(0, i - kl)) stays the Nat
    // it is, so that bounds and indices using it stay affine for the schedules.
    std::optional<Nat> folded = integer && !trivial(x->scalar) ? foldNat(x->scalar) : std::nullopt;
    if (folded) {
      x = scalarVal(natExpr(*folded));
    } else if (!trivial(x->scalar) || (integer && x->scalar->kind == ExprKind::Access)) {
      int64_t id = newLocal(var->name, t, x->scalar);
      x = scalarVal(local(id, t));
    }
    if (integer) env.nats.vars[var->id] = natOf(x);
  } else if (x->kind == Val::Array && x->tensor && x->prefix.empty() && x->leaf.empty()) {
    env.nats.arrays[var->id] = NatVarId{x->tensor->id, x->tensor->name};
  }
  env.vals[var->id] = std::move(x);
}

ValP Lowerer::apply(const ValP &f, const std::vector<Bound> &args) {
  if (f->kind != Val::Fun) internal_error_at(SourceLoc{}) << "applying a value that is not a function";
  const tir::Expr &lam = *f->lambda;
  if (lam.params.size() != args.size())
    internal_error_at(lam.loc) << "function of " << lam.params.size() << " parameters applied to " << args.size();
  Env env = *f->env;
  for (size_t i = 0; i < args.size(); ++i) {
    const tir::Param &p = lam.params[i];
    switch (p.sort) {
      case tir::Param::Value: bindValue(env, p.var, args[i].val); break;
      case tir::Param::Nat: env.nats.vars[p.natVar.id] = args[i].nat; break;
      case tir::Param::Nats: env.nats.arrays[p.natVar.id] = args[i].nats; break;
    }
  }
  return eval(lam.args[0], env);
}

void Lowerer::produceAll(const ValP &arr, const std::function<void(const Nat &, ValP)> &cb, SourceLoc loc) {
  if (arr->produce) {
    arr->produce(cb);
    return;
  }
  loop("i", Nat(0), arr->len, arr->loopKind, [&](const Nat &i) { cb(i, arr->elem(i)); }, loc);
}

ValP Lowerer::elemAt(ValP arr, const Nat &i) {
  if (!arr->elem) arr = materialize(arr, "tmp");
  return arr->elem(i);
}

TensorP Lowerer::newTemp(const std::string &name, const TypeP &type) {
  TensorP t = temporary(name, type);
  kernel_.tensors.push_back(t);
  auto marker = std::make_shared<Stmt>();
  marker->kind = StmtKind::Alloc;
  marker->tensor = t;
  emit(marker);
  return t;
}

ValP Lowerer::materialize(const ValP &v, const std::string &name) {
  TensorP t = newTemp(name, v->type);
  write(v, t, {}, {});
  if (isGpuThreadLevel(v->loopKind)) {
    // A GPU level's results consumed by the enclosing level: shared memory, then a barrier.
    auto b = std::make_shared<Stmt>();
    b->kind = StmtKind::Barrier;
    emit(b);
  }
  return tensorView(t, t->type, {}, {});
}

bool isGpuThreadLevel(ForallKind k) {
  return k == ForallKind::GpuThread || k == ForallKind::GpuWarp || k == ForallKind::GpuLane;
}

/// Whether `var` is read inside a function of `e` (a map's or generate's body), i.e. where it
/// is evaluated once per application rather than once.
static bool readInsideFunction(const tir::ExprP &e, const tir::VarP &var, bool inside = false) {
  if (!e) return false;
  if (e->kind == tir::ExprKind::VarRef && e->var == var) return inside;
  bool deeper = inside || e->kind == tir::ExprKind::Lambda;
  for (const tir::ExprP &a : e->args)
    if (readInsideFunction(a, var, deeper)) return true;
  return false;
}

void Lowerer::write(const ValP &v, const TensorP &t, std::vector<Nat> idx, std::vector<int> leaf) {
  switch (v->kind) {
    case Val::Scalar: emit(assign(access(t, idx, leaf, v->scalar->type), v->scalar)); return;
    case Val::Tuple:
      for (size_t k = 0; k < v->parts.size(); ++k) {
        auto l = leaf;
        l.push_back(static_cast<int>(k));
        write(v->parts[k], t, idx, l);
      }
      return;
    case Val::Array:
      produceAll(v, [&](const Nat &pos, ValP x) {
        auto i2 = idx;
        i2.push_back(pos);
        write(x, t, i2, leaf);
      });
      return;
    case Val::Fun: throw CompileError(SourceLoc{}, "not supported yet: storing a function");
    case Val::Pair: throw CompileError(SourceLoc{}, "not supported yet: a dependent pair inside a result");
  }
}

std::vector<ExprP> Lowerer::leaves(const ValP &v) {
  if (v->kind == Val::Scalar) return {v->scalar};
  if (v->kind != Val::Tuple) throw CompileError(SourceLoc{}, "not supported yet: an accumulator that is not a scalar or a tuple of scalars");
  std::vector<ExprP> out;
  for (const ValP &p : v->parts) {
    auto l = leaves(p);
    out.insert(out.end(), l.begin(), l.end());
  }
  return out;
}

ValP Lowerer::rebuild(const ValP &shape, const std::vector<ExprP> &ls, size_t &pos) {
  if (shape->kind == Val::Scalar) return scalarVal(ls[pos++]);
  std::vector<ValP> parts;
  for (const ValP &p : shape->parts) parts.push_back(rebuild(p, ls, pos));
  return tupleVal(std::move(parts));
}

/// Marks the combination `acc op x` as reassociable (a `reduce`): lets the vectoriser and the
/// parallel reduction reorder it. Float min/max are maxnum/minnum, which commute and associate.
ExprP markReassoc(const ExprP &e) {
  if ((e->kind == ExprKind::Binary && (e->binop == ast::BinOp::Add || e->binop == ast::BinOp::Mul)) ||
      e->kind == ExprKind::MinMax) {
    auto c = std::make_shared<Expr>(*e);
    c->reassoc = true;
    return c;
  }
  return e;
}

/// Is the combination `next` of accumulator `acc` one LLVM vectorises by itself: acc + x,
/// acc * x, min or max of acc and x?
static bool plainReduction(const ExprP &next, int64_t acc) {
  bool combines = (next->kind == ExprKind::Binary && (next->binop == ast::BinOp::Add || next->binop == ast::BinOp::Mul)) ||
                  next->kind == ExprKind::MinMax;
  if (!combines) return false;
  for (const ExprP &a : next->args)
    if (a->kind == ExprKind::Local && a->local == acc) return true;
  return false;
}

/// Is `next` accumulator `acc` combined with a value that reads none of the accumulators `accs`
/// (`acc op e`)? A tuple reduction's leaves that all are may each be assigned as it is computed:
/// no other leaf reads the accumulator it changes. The dependence analysis then sees each
/// accumulator updated in one statement, a reduction, where the new values computed into
/// temporaries first made a loop over squares and outliers (nrm2) run in order.
static bool updatesItsOwnOnly(const ExprP &next, int64_t acc, const std::vector<int64_t> &accs) {
  if (!plainReduction(next, acc)) return false;
  int own = 0;
  for (const ExprP &a : next->args) {
    if (a->kind == ExprKind::Local && a->local == acc) {
      ++own;
      continue;
    }
    if (anyExpr(a, [&](const Expr &x) { return x.kind == ExprKind::Local && std::find(accs.begin(), accs.end(), x.local) != accs.end(); }))
      return false;
  }
  return own == 1;
}

/// The lanes of a lane-split reduction: four vectors of 512 bits of the widest accumulator
/// (independent chains of compares and selects, each a few cycles long), and a vector's worth.
static std::pair<int64_t, int64_t> reductionLanes(const std::vector<ExprP> &accs) {
  int64_t widest = 1;
  for (const ExprP &a : accs) widest = std::max<int64_t>(widest, a->type == Scalar::F64 || a->type == Scalar::I64 ? 8 : 4);
  return {4 * 64 / widest, 64 / widest};
}

/// Does `s` hold a loop (at any depth)? A loop over lanes whose body has one is not vectorised.
static bool holdsLoop(const StmtP &s) {
  if (!s) return false;
  if (s->kind == StmtKind::Forall) return true;
  for (const StmtP &b : s->body)
    if (holdsLoop(b)) return true;
  return false;
}

ValP Lowerer::accumulate(const ValP &op, const ValP &init, const ValP &arr0, bool reassoc, SourceLoc loc,
                         const std::function<void(const ValP &acc, const Nat &pos)> &after) {
  // The elements of a GPU-mapped level are computed by its threads, not inside this loop.
  ValP arr = isGpuThreadLevel(arr0->loopKind) || arr0->loopKind == ForallKind::GpuBlock ? materialize(arr0, "level") : arr0;
  std::vector<ExprP> initLeaves = leaves(init);
  std::vector<int64_t> accIds;
  std::vector<ExprP> accExprs;
  for (const ExprP &l : initLeaves) {
    int64_t id = newLocal("acc", l->type, l);
    accIds.push_back(id);
    accExprs.push_back(local(id, l->type));
  }
  size_t pos = 0;
  ValP acc = rebuild(init, accExprs, pos);
  // Whether every leaf of the combination is a plain reduction of its own accumulator (noted
  // at the loop's first step).
  bool plain = true;
  auto step = [&](const Nat &i, const ValP &x) {
    ValP next = apply(op, {Bound::value(tupleVal({acc, x}))});
    std::vector<ExprP> nl = leaves(next);
    bool ownOnly = true;
    for (size_t k = 0; k < nl.size(); ++k) {
      plain = plain && plainReduction(nl[k], accIds[k]);
      ownOnly = ownOnly && updatesItsOwnOnly(nl[k], accIds[k], accIds);
    }
    // Compute all new values before assigning where a leaf reads another's accumulator (an
    // argmax's position chosen by its value).
    std::vector<ExprP> fresh;
    for (size_t k = 0; k < nl.size(); ++k) {
      ExprP e = reassoc ? markReassoc(nl[k]) : nl[k];
      if (nl.size() > 1 && !trivial(e) && !ownOnly) {
        int64_t id = newLocal("next", e->type, e);
        e = local(id, e->type);
      }
      fresh.push_back(e);
    }
    for (size_t k = 0; k < fresh.size(); ++k) emit(setLocal(accIds[k], fresh[k], fresh[k]->type));
    if (after) after(acc, i + Nat(1));
  };
  if (arr->produce) {
    // The producer's loops deliver the elements in order; what each step computes is free.
    std::optional<ForallKind> outer = producerOrder_;
    producerOrder_ = reassoc ? ForallKind::Reduction : ForallKind::Serial;
    arr->produce([&](const Nat &i, const ValP &x) {
      std::optional<ForallKind> inOrder = producerOrder_;
      producerOrder_ = outer;
      step(i, x);
      producerOrder_ = inOrder;
    });
    producerOrder_ = outer;
  } else if (!reassoc || after || opts_.cuda || initLeaves.size() < 2) {
    loop("k", Nat(0), arr->len, reassoc ? ForallKind::Reduction : ForallKind::Serial,
         [&](const Nat &i) { step(i, arr->elem(i)); }, loc);
  } else {
    // A reduce over tuples: lowered as usual first, and where the combination couples the
    // accumulators (an argmax's value and position) lowered again in lanes (accumulateInLanes).
    const size_t tensorsBefore = kernel_.tensors.size();
    pushBlock();
    loop("k", Nat(0), arr->len, ForallKind::Reduction, [&](const Nat &i) { step(i, arr->elem(i)); }, loc);
    StmtP inOrder = popBlock();
    const auto [lanes, vector] = reductionLanes(accExprs);
    const std::optional<int64_t> len = arr->len.asConst();
    // In order where LLVM vectorises it already, where an element is computed by a loop or
    // in a temporary of its own (the loop over lanes would not vectorise), or where x is
    // shorter than one vector.
    bool elementLoops = false;
    for (const StmtP &st : inOrder->body)
      for (const StmtP &inner : st->kind == StmtKind::Forall ? st->body : std::vector<StmtP>{st}) elementLoops = elementLoops || holdsLoop(inner);
    if (plain || elementLoops || kernel_.tensors.size() != tensorsBefore || (len && *len < vector)) {
      for (const StmtP &s : inOrder->body) emit(s);
    } else {
      accumulateInLanes(lanes, vector, op, acc, arr, step, loc);
    }
  }
  return acc;
}

void Lowerer::accumulateInLanes(int64_t lanes, int64_t vector, const ValP &op, const ValP &acc, const ValP &arr,
                                const std::function<void(const Nat &, const ValP &)> &step, SourceLoc loc) {
  // Why: LLVM vectorises a reduction of one accumulator; one whose combination reads the other
  // accumulators (if |x| > best.0 then (|x|, i) else best) stays scalar, an element a step.
  // In lanes: `lanes` partial accumulators in small temporaries, lane l taking the elements
  // l, l + lanes, ...; a loop over the lanes has independent iterations, each loading its
  // lane's accumulators, combining one element and storing them, so LLVM vectorises it (a
  // vector of each accumulator, the combination's compares and selects lane by lane) and
  // keeps the temporaries in registers across the loop over groups of lanes. The last,
  // partial group runs the same loop over the lanes it has, in masked vectors. The lanes are then
  // combined pairwise, the upper half into the lower, in vectors, and the one left into the
  // accumulators. A reduce's combination is associative and its order unspecified
  // (LANGUAGE.md), which this regrouping takes; argmax's (the largest value, then the
  // smallest position) gives the same result in any order.
  const std::vector<ExprP> accNow = leaves(acc);
  std::vector<TensorP> laneAccs;
  for (const ExprP &a : accNow) laneAccs.push_back(newTemp("lanes", types::array(Nat(lanes), types::scalar(a->type))));
  auto laneLoop = [&](int64_t count, const std::function<void(const Nat &)> &body, bool partial = false) {
    NatVarId l = freshNatVar("lane");
    pushBlock();
    body(Nat::var(l));
    StmtP b = popBlock();
    auto f = std::make_shared<Stmt>(*forall(l.id, "lane", Nat(0), Nat(count), b, ForallKind::Vector, loc));
    // Two lanes or one are left to LLVM as they are (a forced vector of two failed to
    // vectorise in the last halving step, its lanes already scalars).
    if (count >= 4) {
      // One pass of vectors: `count` lanes as whole vectors interleaved, so that the vector
      // loop runs once and goes, and the lanes' temporaries become registers. Not unrolled
      // before the vectoriser sees it (its few iterations would be, and the lanes become
      // scalars that nothing vectorises).
      f->vectorize = true;
      f->vectorWidth = static_cast<int>(std::min(count, vector));
      f->interleave = static_cast<int>(std::max<int64_t>(1, count / vector));
      f->unroll = 1;
    }
    if (partial) {
      // The lanes the partial group has (its guard narrows the loop to them: loopir/GuardRange)
      // as masked vectors one at a time: a pass of four vectors would leave them to a scalar loop.
      f->interleave = 1;
      f->maskedTail = true;
    }
    emit(f);
  };
  auto laneAcc = [&](size_t k, const Nat &l) { return access(laneAccs[k], {l}, {}, accNow[k]->type); };
  auto laneVal = [&](const Nat &l) {
    std::vector<ExprP> ls;
    for (size_t k = 0; k < accNow.size(); ++k) ls.push_back(laneAcc(k, l));
    size_t pos = 0;
    return rebuild(acc, ls, pos);
  };
  // Lane l combines `x` into its accumulators: all new values before any store (the
  // combination reads every accumulator).
  auto combineInto = [&](const Nat &l, const ValP &x) {
    std::vector<ExprP> mine;
    for (size_t k = 0; k < accNow.size(); ++k)
      mine.push_back(local(newLocal("lane_acc", accNow[k]->type, laneAcc(k, l)), accNow[k]->type));
    size_t pos = 0;
    std::vector<ExprP> nl = leaves(apply(op, {Bound::value(tupleVal({rebuild(acc, mine, pos), x}))}));
    std::vector<ExprP> fresh;
    for (const ExprP &e : nl) fresh.push_back(trivial(e) ? e : local(newLocal("next", e->type, e), e->type));
    for (size_t k = 0; k < fresh.size(); ++k) emit(assign(laneAcc(k, l), fresh[k]));
  };
  // Every lane starts from the initial values (the accumulators hold them).
  laneLoop(lanes, [&](const Nat &l) {
    for (size_t k = 0; k < accNow.size(); ++k) emit(assign(laneAcc(k, l), accNow[k]));
  });
  const Nat groups = Nat::div(arr->len, lanes);
  loop("group", Nat(0), groups, ForallKind::Serial,
       [&](const Nat &g) { laneLoop(lanes, [&](const Nat &l) { combineInto(l, arr->elem(g * Nat(lanes) + l)); }); }, loc);
  const Nat rest = groups * Nat(lanes);
  if (std::optional<int64_t> len = arr->len.asConst(); !len || *len % lanes != 0) {
    laneLoop(lanes, [&](const Nat &l) {
      pushBlock();
      combineInto(l, arr->elem(rest + l));
      StmtP b = popBlock();
      emit(ifThen(binary(ast::BinOp::Lt, natExpr(rest + l), natExpr(arr->len), Scalar::Bool), b));
    }, /*partial=*/true);
  }
  for (int64_t half = lanes / 2; half >= 1; half /= 2)
    laneLoop(half, [&](const Nat &l) { combineInto(l, laneVal(l + Nat(half))); });
  step(Nat(0), laneVal(Nat(0)));
}

// ---- evaluation -------------------------------------------------------------------------------

ValP Lowerer::evalIf(const tir::Expr &e, const Env &env) {
  ValP c = eval(e.args[0], env);
  // Where a branch emits statements, its results go through locals declared before the `if`
  // and set at the end of the branch, inside its block: a temporary the branch allocates (a
  // precomputed let) lives until the end of that block, and the results may be read from it.
  std::vector<int64_t> ids;
  std::vector<ExprP> tl;
  auto declareBeforeIf = [&] {
    for (const ExprP &l : tl) {
      int64_t id = freshNatVar("sel").id;
      blocks_[blocks_.size() - 2].push_back(declLocal(id, "sel", l->type, nullptr));
      ids.push_back(id);
    }
  };
  auto setAll = [&](const std::vector<ExprP> &values) {
    std::vector<StmtP> sets;
    for (size_t k = 0; k < ids.size(); ++k) sets.push_back(setLocal(ids[k], convert(values[k], tl[k]->type), tl[k]->type));
    return sets;
  };
  pushBlock();
  ValP t = eval(e.args[1], env);
  if (t->kind == Val::Array || t->kind == Val::Fun || t->kind == Val::Pair)
    throw CompileError(e.loc, "not supported yet: an `if` whose branches are arrays or functions");
  tl = leaves(t);
  const bool thenEmits = !blocks_.back().empty();
  if (thenEmits) {
    declareBeforeIf();
    for (StmtP &st : setAll(tl)) emit(std::move(st));
  }
  StmtP tb = popBlock();
  pushBlock();
  ValP f = eval(e.args[2], env);
  std::vector<ExprP> fl = leaves(f);
  if (!thenEmits && blocks_.back().empty()) {
    popBlock();
    std::vector<ExprP> sel;
    for (size_t k = 0; k < tl.size(); ++k) sel.push_back(select(c->scalar, tl[k], convert(fl[k], tl[k]->type), tl[k]->type));
    size_t pos = 0;
    return rebuild(t, sel, pos);
  }
  if (!thenEmits) declareBeforeIf();
  for (StmtP &st : setAll(fl)) emit(std::move(st));
  StmtP fb = popBlock();
  if (!thenEmits) tb = block(setAll(tl));
  emit(ifThen(c->scalar, tb, fb));
  std::vector<ExprP> outs;
  for (size_t k = 0; k < ids.size(); ++k) outs.push_back(local(ids[k], tl[k]->type));
  size_t pos = 0;
  return rebuild(t, outs, pos);
}

ValP Lowerer::eval(const tir::ExprP &ep, const Env &env) {
  const tir::Expr &e = *ep;
  using K = tir::ExprKind;
  switch (e.kind) {
    case K::Lit: {
      Scalar t = sk(e.type, env);
      if (t == Scalar::Bool) return scalarVal(constBool(e.bval));
      if (isFloat(t)) return scalarVal(constFloat(e.fval, t));
      return scalarVal(constInt(e.ival, t));
    }
    case K::VarRef: {
      auto it = env.vals.find(e.var->id);
      if (it == env.vals.end()) internal_error_at(e.loc) << "unbound variable '" << e.var->name << "' in lowering";
      return it->second;
    }
    case K::NatValue: return scalarVal(natExpr(substitute(e.nat, env.nats)));
    case K::Lambda: {
      auto v = std::make_shared<Val>();
      v->kind = Val::Fun;
      v->lambda = ep;
      v->env = std::make_shared<Env>(env);
      return v;
    }
    case K::App: {
      ValP f = eval(e.args[0], env);
      std::vector<Bound> args;
      for (size_t i = 1; i < e.args.size(); ++i) args.push_back(Bound::value(eval(e.args[i], env)));
      return apply(f, args);
    }
    case K::Let: {
      Env inner = env;
      ValP v = eval(e.args[0], env);
      // precompute(name): computed once, here, into a temporary that its uses read.
      if (opts_.precompute.count(e.var->name) && v->kind == Val::Array) {
        v = materialize(v, e.var->name);
        kernel_.precomputed.insert(e.var->name);
      } else if (v->kind == Val::Array && !v->elem && readInsideFunction(e.args[1], e.var)) {
        // A producer (scan, which) has no random access: read inside a function, it would be
        // produced again, in full, at every application (quadratic). Produce it once, here.
        v = materialize(v, e.var->name);
      }
      bindValue(inner, e.var, v);
      return eval(e.args[1], inner);
    }
    case K::If: return evalIf(e, env);
    case K::Tuple: {
      std::vector<ValP> parts;
      for (const tir::ExprP &a : e.args) parts.push_back(eval(a, env));
      return tupleVal(std::move(parts));
    }
    case K::Proj: {
      ValP t = eval(e.args[0], env);
      if (t->kind != Val::Tuple || static_cast<size_t>(e.proj) >= t->parts.size())
        internal_error_at(e.loc) << "projection of a value that is not a tuple";
      return t->parts[e.proj];
    }
    case K::Index: {
      ValP a = eval(e.args[0], env);
      if (a->kind != Val::Array) internal_error_at(e.loc) << "indexing a value that is not an array";
      Nat pos = e.args[1]->kind == K::NatValue ? substitute(e.args[1]->nat, env.nats) : natOf(eval(e.args[1], env));
      if (checked_) checkIndex(pos, a->len, e.loc);
      return elemAt(a, pos);
    }
    case K::Unary: {
      ValP a = eval(e.args[0], env);
      if (e.unop == ast::UnOp::Sqrt && !isFloat(a->scalar->type))
        throw CompileError(e.loc, std::string("sqrt needs a float (f32 or f64), found ") + scalarName(a->scalar->type) +
                                      " (the export's type argument)");
      return scalarVal(unary(e.unop, a->scalar, a->scalar->type));
    }
    case K::Binary: {
      ValP a = eval(e.args[0], env);
      ValP b = eval(e.args[1], env);
      Scalar t = sk(e.type, env);
      ExprP x = a->scalar, y = b->scalar;
      Scalar ot = x->type;
      if (ot != y->type) y = convert(y, ot);
      return scalarVal(binary(e.binop, x, y, t));
    }
    case K::Convert: {
      ValP a = eval(e.args[0], env);
      return scalarVal(convert(a->scalar, sk(e.type, env)));
    }
    case K::MinMax: {
      ValP a = eval(e.args[0], env);
      ValP b = eval(e.args[1], env);
      Scalar t = sk(e.type, env);
      return scalarVal(minmax(e.isMax, convert(a->scalar, t), convert(b->scalar, t), t));
    }
    case K::Prim: return evalPrim(e, env);
    case K::CallDef: {
      Env callee;
      callee.typeArgs = env.typeArgs;
      const tir::Def &d = *e.def;
      for (size_t i = 0; i < d.params.size(); ++i) {
        const tir::DefParam &p = d.params[i];
        const tir::CallArg &a = e.callArgs[i];
        switch (p.sort) {
          case tir::DefParam::Nat: callee.nats.vars[p.natVar.id] = substitute(a.nat, env.nats); break;
          case tir::DefParam::Nats: {
            auto it = env.nats.arrays.find(a.nats.id);
            callee.nats.arrays[p.natVar.id] = it != env.nats.arrays.end() ? it->second : a.nats;
            break;
          }
          case tir::DefParam::Data: callee.typeArgs[p.typeVar->id] = kt(a.type, env); break;
          case tir::DefParam::Value: bindValue(callee, p.value, eval(a.value, env)); break;
        }
      }
      if (++inlineDepth_ > 200) throw CompileError(e.loc, "definitions nested more than 200 calls deep");
      ValP r = eval(d.body, callee);
      --inlineDepth_;
      return r;
    }
    case K::Einsum: return evalEinsum(e, env);
  }
  internal_error_at(e.loc) << "unknown expression in lowering";
  return nullptr;
}

ValP Lowerer::evalPrim(const tir::Expr &e, const Env &env) {
  TypeP rt = kt(e.type, env);
  switch (e.prim) {
#define SPL_PRIMITIVE(Enum, text, arity, sort, typeRule, lowerRule) \
  case tir::Prim::Enum: return lowerRule(e, env, rt);
#include "tir/Primitives.def"
  }
  internal_error_at(e.loc) << "unknown primitive in lowering";
  return nullptr;
}

// ---- the lowerings, one per row of tir/Primitives.def ------------------------------------------

ValP Lowerer::lowerMap(const tir::Expr &e, const Env &env, const TypeP &rt) {
  ValP f = eval(e.args[0], env);
  ValP a = eval(e.args[1], env);
  auto m = arrayVal(rt);
  m->loopKind = mapKind(e.prim);
  if (a->elem) {
    m->elem = [this, f, a](const Nat &i) { return apply(f, {Bound::position(i), Bound::value(a->elem(i))}); };
  } else {
    m->produce = [this, f, a](const std::function<void(const Nat &, ValP)> &cb) {
      a->produce([&](const Nat &i, ValP x) { cb(i, apply(f, {Bound::position(i), Bound::value(x)})); });
    };
  }
  return m;
}

ValP Lowerer::lowerZip(const tir::Expr &e, const Env &env, const TypeP &rt) {
  ValP a = eval(e.args[0], env);
  ValP b = eval(e.args[1], env);
  auto z = arrayVal(rt);
  z->loopKind = a->loopKind;
  if (a->elem && b->elem) {
    z->elem = [a, b, this](const Nat &i) { return tupleVal({a->elem(i), b->elem(i)}); };
  } else if (b->elem) {
    z->produce = [a, b, this](const std::function<void(const Nat &, ValP)> &cb) {
      a->produce([&](const Nat &i, ValP x) { cb(i, tupleVal({x, b->elem(i)})); });
    };
  } else if (a->elem) {
    z->produce = [a, b, this](const std::function<void(const Nat &, ValP)> &cb) {
      b->produce([&](const Nat &i, ValP y) { cb(i, tupleVal({a->elem(i), y})); });
    };
  } else {
    ValP am = materialize(a, "zip");
    z->elem = [am, b, this](const Nat &i) { return tupleVal({am->elem(i), elemAt(b, i)}); };
  }
  return z;
}

ValP Lowerer::lowerUnzip(const tir::Expr &e, const Env &env, const TypeP &rt) {
  ValP a = eval(e.args[0], env);
  if (!a->elem) a = materialize(a, "unzip");
  std::vector<ValP> parts;
  for (size_t k = 0; k < rt->elems.size(); ++k) {
    auto u = arrayVal(rt->elems[k]);
    u->loopKind = a->loopKind;
    u->elem = [a, k](const Nat &i) { return a->elem(i)->parts[k]; };
    parts.push_back(u);
  }
  return tupleVal(std::move(parts));
}

/// The array of arrays `rt` whose element (outer, inner) is a's element at index(outer, inner):
/// split's groups and strided's phases, views of a (materialized first if it is produced).
ValP Lowerer::nestedView(ValP a, const TypeP &rt, const char *what, std::function<Nat(const Nat &, const Nat &)> index) {
  if (!a->elem) a = materialize(a, what);
  auto outer = arrayVal(rt);
  outer->loopKind = a->loopKind;
  outer->elem = [this, a, rt, index](const Nat &o) {
    auto inner = arrayVal(types::elementAt(*rt, o));
    inner->loopKind = a->loopKind;
    inner->elem = [a, o, index](const Nat &i) { return a->elem(index(o, i)); };
    return std::static_pointer_cast<const Val>(inner);
  };
  return outer;
}

ValP Lowerer::lowerSplit(const tir::Expr &e, const Env &env, const TypeP &rt) {
  Nat k = substitute(e.natArgs[0], env.nats);
  return nestedView(eval(e.args[0], env), rt, "split", [k](const Nat &g, const Nat &r) { return g * k + r; });
}

ValP Lowerer::lowerJoin(const tir::Expr &e, const Env &env, const TypeP &rt) {
  ValP a = eval(e.args[0], env);
  TypeP at = a->type;
  NatVarId probe = freshNatVar("p");
  TypeP innerT = types::elementAt(*at, Nat::var(probe));
  Nat innerLen = innerT->len;
  auto j = arrayVal(rt);
  j->loopKind = a->loopKind;
  bool uniform = !innerLen.mentions(probe.id);
  if (uniform && a->elem) {
    j->elem = [this, a, innerLen](const Nat &p) {
      Nat q, r;
      if (auto c = innerLen.asConst(); c && *c > 0) {
        q = Nat::div(p, *c);
        r = Nat::mod(p, *c);
      } else {
        ExprP pe = natExpr(p), le = natExpr(innerLen);
        q = Nat::value(NatVarId{newLocal("q", Scalar::I64, binary(ast::BinOp::Div, pe, le, Scalar::I64)), "q"});
        r = Nat::value(NatVarId{newLocal("r", Scalar::I64, binary(ast::BinOp::Mod, pe, le, Scalar::I64)), "r"});
      }
      return elemAt(a->elem(q), r);
    };
  }
  j->produce = [this, a, at, probe, innerLen](const std::function<void(const Nat &, ValP)> &cb) {
    auto outer = [&](const Nat &i, ValP row) {
      NatVarId q = freshNatVar("q");
      NatSubst s;
      s.vars.emplace(probe.id, Nat::var(q));
      Nat start = Nat::sum(q, Nat(0), i, substitute(innerLen, s));
      produceAll(row, [&](const Nat &r, ValP x) { cb(start + r, x); });
    };
    produceAll(a, outer);
  };
  return j;
}

ValP Lowerer::lowerTranspose(const tir::Expr &e, const Env &env, const TypeP &rt) {
  ValP a = eval(e.args[0], env);
  if (!a->elem) a = materialize(a, "transpose");
  auto t = arrayVal(rt);
  t->loopKind = a->loopKind;
  t->elem = [this, a, rt](const Nat &i) {
    auto col = arrayVal(types::elementAt(*rt, i));
    col->loopKind = a->loopKind;
    col->elem = [this, a, i](const Nat &j) { return elemAt(a->elem(j), i); };
    return std::static_pointer_cast<const Val>(col);
  };
  return t;
}

ValP Lowerer::lowerAsDepArray(const tir::Expr &e, const Env &env, const TypeP &) { return eval(e.args[0], env); }

ValP Lowerer::lowerTakeOrDrop(const tir::Expr &e, const Env &env, const TypeP &rt) {
  ValP a = eval(e.args[0], env);
  if (!a->elem) a = materialize(a, "take");
  Nat k = substitute(e.natArgs[0], env.nats);
  auto t = arrayVal(rt);
  t->loopKind = a->loopKind;
  if (e.prim == tir::Prim::Take) t->elem = [a](const Nat &i) { return a->elem(i); };
  else t->elem = [a, k](const Nat &i) { return a->elem(i + k); };
  return t;
}

ValP Lowerer::lowerGenerate(const tir::Expr &e, const Env &env, const TypeP &rt) {
  ValP f = eval(e.args[0], env);
  auto g = arrayVal(rt);
  g->elem = [this, f](const Nat &i) { return apply(f, {Bound::position(i)}); };
  return g;
}

ValP Lowerer::lowerRecur(const tir::Expr &e, const Env &env, const TypeP &rt) {
  // Into a temporary, in order: element i is written before element i + 1 reads it through
  // its prefix. The loop is serial here; poly's dependences find it carried (a flow dependence
  // on the temporary), so no schedule runs it in parallel.
  ValP f = eval(e.args[0], env);
  auto r = arrayVal(rt);
  TensorP t = newTemp("rec", r->type);
  TypeP elem = types::elementAt(*r->type, Nat(0));
  loop("i", Nat(0), r->len, ForallKind::Serial, [&](const Nat &i) {
    ValP prev = tensorView(t, types::array(i, elem), {}, {});
    write(apply(f, {Bound::position(i), Bound::value(prev)}), t, {i}, {});
  }, e.loc);
  return tensorView(t, t->type, {}, {});
}

ValP Lowerer::lowerIota(const tir::Expr &e, const Env &env, const TypeP &rt) {
  auto g = arrayVal(rt);
  g->elem = [this](const Nat &i) { return scalarVal(natExpr(i)); };
  return g;
}

ValP Lowerer::lowerStrided(const tir::Expr &e, const Env &env, const TypeP &rt) {
  Nat s = substitute(e.natArgs[0], env.nats);
  return nestedView(eval(e.args[0], env), rt, "strided", [s](const Nat &t, const Nat &u) { return t + u * s; });
}

ValP Lowerer::lowerLen(const tir::Expr &, const Env &, const TypeP &rt) { return scalarVal(natExpr(rt->len)); }

ValP Lowerer::lowerReduceOrFold(const tir::Expr &e, const Env &env, const TypeP &rt) {
  bool isReduce = e.prim == tir::Prim::Reduce;
  ValP op = eval(e.args[isReduce ? 0 : 1], env);
  ValP init = eval(e.args[isReduce ? 1 : 0], env);
  ValP a = eval(e.args[2], env);
  return accumulate(op, init, a, isReduce, e.loc, nullptr);
}

ValP Lowerer::lowerScan(const tir::Expr &e, const Env &env, const TypeP &rt) {
  ValP op = eval(e.args[0], env);
  ValP init = eval(e.args[1], env);
  ValP a = eval(e.args[2], env);
  auto s = arrayVal(rt);
  s->loopKind = ForallKind::Serial;
  SourceLoc loc = e.loc;
  s->produce = [this, op, init, a, loc](const std::function<void(const Nat &, ValP)> &cb) {
    std::vector<ExprP> il = leaves(init);
    // The first element is init itself, written before the running accumulation.
    cb(Nat(0), init);
    accumulate(op, init, a, false, loc, [&](const ValP &acc, const Nat &pos) { cb(pos, acc); });
  };
  return s;
}

ValP Lowerer::lowerWhich(const tir::Expr &e, const Env &env, const TypeP &rt) {
  ValP a = eval(e.args[0], env);
  Nat k = substitute(e.natArgs[0], env.nats);
  auto w = arrayVal(rt);
  w->loopKind = ForallKind::Serial;
  SourceLoc loc = e.loc;
  w->produce = [this, a, k, loc](const std::function<void(const Nat &, ValP)> &cb) {
    int64_t cnt = newLocal("cnt", Scalar::I64, constInt(0));
    Nat cntNat = Nat::value(NatVarId{cnt, "cnt"});
    ExprP kE = natExpr(k);
    loop("j", Nat(0), a->len, ForallKind::Serial, [&](const Nat &j) {
      ValP flag = elemAt(a, j);
      ExprP cond = binary(ast::BinOp::And, binary(ast::BinOp::Lt, local(cnt, Scalar::I64), kE, Scalar::Bool), flag->scalar,
                          Scalar::Bool);
      pushBlock();
      cb(cntNat, scalarVal(natExpr(j)));
      emit(setLocal(cnt, binary(ast::BinOp::Add, local(cnt, Scalar::I64), constInt(1), Scalar::I64), Scalar::I64));
      StmtP body = popBlock();
      emit(ifThen(cond, body));
    }, loc);
    // Fewer than k true elements: the missing entries are index 0.
    loop("r", cntNat, k, ForallKind::Serial, [&](const Nat &r) { cb(r, scalarVal(constInt(0))); }, loc);
  };
  return w;
}

ValP Lowerer::lowerLiftNat(const tir::Expr &e, const Env &env, const TypeP &rt) {
  ValP v = eval(e.args[0], env);
  ValP f = eval(e.args[1], env);
  Nat n = natOf(scalarVal(convert(v->scalar, Scalar::I64)));
  return apply(f, {Bound::position(n)});
}

ValP Lowerer::lowerLiftNats(const tir::Expr &e, const Env &env, const TypeP &rt) {
  ValP a = eval(e.args[0], env);
  ValP f = eval(e.args[1], env);
  if (!(a->tensor && a->prefix.empty() && a->leaf.empty())) a = materialize(a, "nats");
  return apply(f, {Bound{Nat(0), NatVarId{a->tensor->id, a->tensor->name}, nullptr}});
}

ValP Lowerer::lowerMakeDepPair(const tir::Expr &e, const Env &env, const TypeP &rt) {
  ValP v = eval(e.args[0], env);
  auto p = std::make_shared<Val>();
  p->kind = Val::Pair;
  p->second = v;
  if (e.natsArgIsSet) {
    p->overNats = true;
    auto it = env.nats.arrays.find(e.natsArg.id);
    p->firstNats = it != env.nats.arrays.end() ? it->second : e.natsArg;
  } else {
    p->first = substitute(e.natArgs[0], env.nats);
  }
  return p;
}

ValP Lowerer::lowerMatchDepPair(const tir::Expr &e, const Env &env, const TypeP &rt) {
  ValP p = eval(e.args[0], env);
  ValP f = eval(e.args[1], env);
  if (p->kind != Val::Pair) internal_error_at(e.loc) << "matchDepPair of a value that is not a pair";
  return apply(f, {Bound{p->first, p->firstNats, nullptr}, Bound::value(p->second)});
}

ValP Lowerer::lowerInspect(const tir::Expr &e, const Env &, const TypeP &) {
  // An exported `def f(A) = inspect(A)` is lowered whole by LowerInspect.cpp.
  throw CompileError(e.loc, "inspect must be the whole body of an exported def (the conversion writes the export's outputs)");
}

ValP Lowerer::lowerReduceToNat(const tir::Expr &e, const Env &env, const TypeP &rt) {
  ValP p = eval(e.args[0], env);
  if (p->kind != Val::Pair || p->second->kind != Val::Array)
    internal_error_at(e.loc) << "reduceToNat of a value that is not a pair of a nats and an array";
  auto r = std::make_shared<Val>();
  r->kind = Val::Pair;
  r->overNats = false;
  r->first = p->second->len;  // F(ks), e.g. wo@m - wo@0: two lookups
  r->second = p->second;
  return r;
}


ForallKind Lowerer::mapKind(tir::Prim p) const {
  switch (p) {
    case tir::Prim::MapSeq: return ForallKind::Serial;
    case tir::Prim::MapGlobal: return ForallKind::GpuGlobal;
    case tir::Prim::MapBlock: return ForallKind::GpuBlock;
    case tir::Prim::MapThread: return ForallKind::GpuThread;
    case tir::Prim::MapWarp: return ForallKind::GpuWarp;
    case tir::Prim::MapLane: return ForallKind::GpuLane;
    default: return ForallKind::Parallel;
  }
}

void Lowerer::checkIndex(const Nat &pos, const Nat &len, SourceLoc loc) {
  // --checked: `@` in range. Positions are nats, so only the upper bound can fail.
  ExprP ok = binary(ast::BinOp::Lt, natExpr(pos), natExpr(len), Scalar::Bool);
  ExprP nonneg = binary(ast::BinOp::Ge, natExpr(pos), constInt(0), Scalar::Bool);
  emit(ifThen(unary(ast::UnOp::Not, binary(ast::BinOp::And, nonneg, ok, Scalar::Bool), Scalar::Bool),
              failWith(1 /* SPL_ERR_BAD_INPUT */, loc)));
}

}  // namespace lower
}  // namespace spl::cin
