/// \file Schedule.cpp: the default CPU schedule (see Schedule.h).
#include "cin/Schedule.h"

#include <functional>
#include <optional>

#include "cin/Layout.h"
#include "cin/Visitor.h"

namespace spl::cin {

namespace {

/// The offsets array T when `n` reads T@(i + 1) for the row variable i (inside min, max or a
/// division too: a tiled row loop's bounds), else 0.
int64_t rowLookupIn(const Nat &n, int64_t rowVar) {
  Nat next = Nat::var(NatVarId{rowVar, ""}) + Nat(1);
  for (const Nat::Term &t : n.terms())
    for (const auto &f : t.mono.factors) {
      const NatAtom &a = *f.first;
      if (a.kind == NatAtomKind::Lookup && a.args[0] == next) return a.var.id;
      if (a.kind == NatAtomKind::Min || a.kind == NatAtomKind::Max || a.kind == NatAtomKind::Div)
        for (const Nat &x : a.args)
          if (int64_t arr = rowLookupIn(x, rowVar)) return arr;
    }
  return 0;
}

/// The offsets array `T` when a loop nested in `s` runs over [0, T@(i+1) - T@i) for the
/// position i of `s`: the work of iteration i is then that row's nonzero count. With `loose`
/// (the CPU's chunking, which only needs the work), a loop whose bounds read T@(i + 1) counts
/// too: the loops of a tiled row.
int64_t rowOffsetsOf(const StmtP &s, int64_t var, bool loose) {
  int64_t found = 0;
  findForall(s, [&](const Stmt &l) {
    found = compressedRowOffsets(l, var);
    if (!found && loose) found = rowLookupIn(l.hi, var);
    return found != 0;
  });
  return found;
}

/// Does n read memory or a run-time value (which the code before a loop may not hold yet)?
bool readsRunTime(const Nat &n) {
  for (const Nat::Term &t : n.terms())
    for (const auto &f : t.mono.factors) {
      NatAtomKind k = f.first->kind;
      if (k == NatAtomKind::Lookup || k == NatAtomKind::Value || k == NatAtomKind::Sum || k == NatAtomKind::Cond) return true;
      for (const Nat &a : f.first->args)
        if (readsRunTime(a)) return true;
    }
  return false;
}

StmtP rewrite(const StmtP &s, bool insideParallel) {
  auto copy = std::make_shared<Stmt>(*s);
  bool inner = insideParallel;
  if (s->kind == StmtKind::Forall && s->userKind) {
    // A user's parallel loop is the one that runs on the pool; inside a user's serial loop (a
    // fused loop carrying sums), loops run serially as inside the default's serial loops below.
    inner = inner || s->forall == ForallKind::Parallel || s->forall == ForallKind::Serial || s->forall == ForallKind::Reduction;
  } else if (s->kind == StmtKind::Forall && s->forall == ForallKind::Parallel) {
    if (insideParallel) copy->forall = ForallKind::Serial;
    else if (s->lo.isZero()) copy->balanceBy = rowOffsetsOf(s->body[0], s->var, /*loose=*/true);
    inner = true;
  }
  if (copy->kind == StmtKind::Forall && copy->forall == ForallKind::Parallel && !insideParallel && !copy->balanceBy) {
    // How much one iteration does sizes the pool's chunks (codegen): an axpy's single elements
    // go to threads only by thousands, a block of gemm's C or 1024 rows of a gemv sweep one by
    // one (a matrix of four blocks would otherwise run on one thread).
    NatFacts loops;
    loops.ranges.push_back({s->var, s->lo, s->hi});
    // A loop that knows its work already (privatize's parts) keeps it where it cannot be bounded.
    if (std::optional<Nat> w = workOf(s->body[0], loops)) copy->iterationWork = w;
    // Where an iteration's work moves with the loop's variable (a triangle's rows lengthen or
    // shorten), how much more the last does than the first: the pool then hands out the
    // heaviest chunks first (codegen), and the threads end together.
    NatFacts around;
    if (std::optional<Nat> w = workOf(s->body[0], around)) {
      NatSubst first, last;
      first.vars.emplace(s->var, s->lo);
      last.vars.emplace(s->var, s->hi - Nat(1));
      Nat growth = substitute(*w, last) - substitute(*w, first);
      if (!growth.isZero() && !readsRunTime(growth)) copy->workGrowth = growth;
    }
  }
  if (s->kind == StmtKind::Forall && s->forall != ForallKind::Parallel && !s->userKind) {
    // A serial or reduction loop: loops inside it may still be the outermost parallel ones,
    // but running a parallel region per iteration of a serial loop costs more than it gives
    // for the small inner loops SPL produces, so they run serially too.
    inner = true;
  }
  for (StmtP &b : copy->body)
    if (b) b = rewrite(b, inner);
  return copy;
}

}  // namespace

std::optional<Nat> workOf(const StmtP &s, NatFacts &loops) {
  if (!s) return Nat(0);
  if (s->kind == StmtKind::Forall) {
    std::optional<Nat> extent = upperBound(Nat::max(s->hi - s->lo, Nat(0)), loops);
    if (!extent || readsRunTime(*extent)) return std::nullopt;
    loops.ranges.push_back({s->var, s->lo, s->hi});
    std::optional<Nat> body = workOf(s->body[0], loops);
    loops.ranges.pop_back();
    if (!body) return std::nullopt;
    return *extent * *body;
  }
  if (s->body.empty()) return Nat(1);
  Nat sum(0);
  for (const StmtP &b : s->body) {
    std::optional<Nat> w = workOf(b, loops);
    if (!w) return std::nullopt;
    sum = sum + *w;
  }
  return sum;
}

namespace {

/// x when n is max(x, 0) (generate's length of a range, max(hi - lo, 0)).
std::optional<Nat> rangeEnd(const Nat &n) {
  std::optional<std::vector<Nat>> arms = maxArms(n);
  if (!arms || arms->size() != 2) return std::nullopt;
  if ((*arms)[0].isZero()) return (*arms)[1];
  if ((*arms)[1].isZero()) return (*arms)[0];
  return std::nullopt;
}

}  // namespace

StmtP shiftToPositions(const Stmt &loop, const Nat &i, int64_t outerVar) {
  Nat k = Nat::var(NatVarId{loop.var, loop.varName});
  // The indices of the body's accesses, in order, until `stop` says so.
  auto eachIndex = [&](const std::function<bool(const Nat &)> &stop) {
    anyStmt(loop.body[0], [&](const Stmt &x) {
      auto found = [&](const Expr &e) {
        if (e.kind != ExprKind::Access) return false;
        for (const Nat &ix : e.indices)
          if (stop(ix)) return true;
        return false;
      };
      return anyExpr(x.value, found) || anyExpr(x.lhs, found);
    });
  };
  Nat by = i, hi;
  if (!loop.lo.mentions(outerVar) && loop.hi.mentions(outerVar) && !(loop.hi + i).mentions(outerVar)) {
    // The rest of a row after i: by i plus the constant c of an index k + i + c the body reads,
    // so that the loop's variable is that position (two loops over one column then meet at the
    // same element); else by i.
    eachIndex([&](const Nat &ix) {
      std::optional<int64_t> c = (ix - k - i).asConst();
      if (c) by = i + Nat(*c);
      return c.has_value();
    });
    hi = loop.hi + by;
  } else if (std::optional<Nat> e = loop.lo.isZero() ? rangeEnd(loop.hi) : std::nullopt) {
    // A part [lo, e) of a row, lo moving with i (a band's row: generate over max(e - lo, 0)
    // reading lo + t, lo = max(0, i - kl)): by lo, read by an index k + lo; [lo, e) runs the
    // same iterations as [lo, lo + max(e - lo, 0)). Of such offsets (a band's stored row
    // ku + lo + t - i too) the one of fewest terms, the position in the row.
    std::optional<Nat> start;
    eachIndex([&](const Nat &ix) {
      Nat d = ix - k;
      bool offset = !d.mentions(loop.var) && d.mentions(outerVar) && (*e + d).terms().size() < e->terms().size();
      if (offset && (!start || d.terms().size() < start->terms().size())) start = d;
      return false;
    });
    if (!start) return nullptr;
    by = *start;
    hi = *e + by;
  } else {
    return nullptr;
  }
  NatSubst shift;
  shift.vars.emplace(loop.var, k - by);
  auto shifted = std::make_shared<Stmt>(loop);
  shifted->body = {substitute(loop.body[0], shift)};
  shifted->lo = loop.lo + by;
  shifted->hi = hi;
  return shifted;
}

Nat strideOf(const Expr &a, int64_t var) {
  Nat off = elementOffset(*a.tensor, a.indices, a.leaf);
  NatSubst s;
  s.vars.emplace(var, Nat::var(NatVarId{var, ""}) + Nat(1));
  return substitute(off, s) - off;
}

int64_t compressedRowOffsets(const Stmt &loop, int64_t rowVar) {
  if (loop.kind != StmtKind::Forall || !loop.segment || loop.segment->lengths || !loop.segment->whole) return 0;
  return loop.segment->parent == Nat::var(NatVarId{rowVar, ""}) ? loop.segment->array.id : 0;
}

namespace {

// ---- reduction interchange (locality) ---------------------------------------------------------


void accessesOf(const ExprP &e, std::vector<const Expr *> &out) {
  anyExpr(e, [&](const Expr &x) {
    if (x.kind == ExprKind::Access) out.push_back(&x);
    return false;
  });
}

bool readsTensor(const StmtP &s, int64_t tensor) {
  auto access = [&](const Expr &e) { return e.kind == ExprKind::Access && e.tensor->id == tensor; };
  return anyStmt(s, [&](const Stmt &x) { return anyExpr(x.value, access) || anyExpr(x.lhs, access); });
}

/// Rows blocked for the interchanged loops: a block of outputs (8 KB of f64 sums) stays in
/// cache across the sweep, and a matrix of a few thousand rows still gives each thread of the
/// pool blocks of its own. A constant, so that the blocks are affine for the polyhedral model
/// (it shows their iterations independent).
constexpr int64_t kRowBlock = 1024;

/// A loop bound as seen from the row loop i: `offset` (free of i), or i + `offset`.
struct RowBound {
  bool rowRelative = false;
  Nat offset;
};
std::optional<RowBound> rowBound(const Nat &b, int64_t i) {
  if (!b.mentions(i)) return RowBound{false, b};
  Nat d = b - Nat::var(NatVarId{i, ""});
  if (!d.mentions(i)) return RowBound{true, d};
  return std::nullopt;
}

/// Worth sweeping rows for each k: some read walks the rows contiguously (forwards or
/// backwards, a reversed view) but jumps along k, and none walks k contiguously while jumping
/// along the rows.
bool sweepGains(const std::vector<const Expr *> &reads, int64_t i, int64_t k) {
  bool gain = false;
  for (const Expr *a : reads) {
    Nat di = strideOf(*a, i), dk = strideOf(*a, k);
    auto unit = [](const Nat &d) {
      std::optional<int64_t> c = d.asConst();
      return c && (*c == 1 || *c == -1);
    };
    bool unitI = unit(di), unitK = unit(dk);
    if (unitI && !unitK) gain = true;
    if (unitK && !unitI && !di.isZero()) return false;
  }
  return gain;
}

/// The statements of a loop body (a block's items, or the one statement).
std::vector<StmtP> itemsOf(const StmtP &body) {
  return body->kind == StmtKind::Block ? body->body : std::vector<StmtP>{body};
}

/// A row's reduction, as the row loop's body holds it: `pre; acc = init; forall k [lo, hi)
/// { private declarations; acc = acc op e }; post`, the reduction items[r] declared by
/// items[r - 1]. Recognised here for both sweeps below.
struct RowReduction {
  StmtP decl, red;
  std::vector<StmtP> pre, post, inner;  // inner: the reduction's body, its update last
  ExprP update;                         // acc op e
  int64_t acc = 0;
};

bool usesLocal(const ExprP &e, int64_t id) {
  return anyExpr(e, [&](const Expr &x) { return x.kind == ExprKind::Local && x.local == id; });
}

/// Does any statement of s read `id` as a Nat (an index, a nat value, a loop bound)?
bool readsAsNat(const StmtP &s, int64_t id) {
  auto inExpr = [&](const ExprP &e) { return anyExpr(e, [&](const Expr &x) { return natMentions(x, id); }); };
  return anyStmt(s, [&](const Stmt &x) {
    return inExpr(x.value) || inExpr(x.lhs) || (x.kind == StmtKind::Forall && (x.lo.mentions(id) || x.hi.mentions(id)));
  });
}

/// Does s read local `id`, as a value or as a Nat?
bool readsLocal(const StmtP &s, int64_t id) {
  return readsAsNat(s, id) || anyStmt(s, [&](const Stmt &x) { return usesLocal(x.value, id) || usesLocal(x.lhs, id); });
}

std::optional<RowReduction> rowReduction(const std::vector<StmtP> &items, size_t r) {
  if (r == 0 || r + 1 >= items.size()) return std::nullopt;
  RowReduction rr;
  rr.decl = items[r - 1];
  rr.red = items[r];
  if (rr.decl->kind != StmtKind::DeclLocal || !rr.decl->value || rr.red->kind != StmtKind::Forall ||
      (rr.red->forall != ForallKind::Reduction && rr.red->forall != ForallKind::Serial))
    return std::nullopt;
  rr.acc = rr.decl->local;
  rr.pre.assign(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(r - 1));
  rr.post.assign(items.begin() + static_cast<std::ptrdiff_t>(r + 1), items.end());
  rr.inner = itemsOf(rr.red->body[0]);
  if (rr.inner.empty() || rr.inner.back()->kind != StmtKind::SetLocal || rr.inner.back()->local != rr.acc) return std::nullopt;
  rr.update = rr.inner.back()->value;
  const ExprP &u = rr.update;
  if (u->kind != ExprKind::Binary || u->args[0]->kind != ExprKind::Local || u->args[0]->local != rr.acc) return std::nullopt;
  if (usesLocal(u->args[1], rr.acc) || usesLocal(rr.decl->value, rr.acc)) return std::nullopt;
  for (size_t j = 0; j + 1 < rr.inner.size(); ++j)
    if (rr.inner[j]->kind != StmtKind::DeclLocal || usesLocal(rr.inner[j]->value, rr.acc)) return std::nullopt;
  // acc is read after the reduction as a value only (it becomes its row's cell).
  for (const StmtP &p : rr.post)
    if (readsAsNat(p, rr.acc)) return std::nullopt;
  return rr;
}

/// `post` with each read of acc replaced by `cell`.
std::vector<StmtP> withCell(const std::vector<StmtP> &post, int64_t acc, const ExprP &cell) {
  struct CellForAcc : Mutator {
    int64_t acc = 0;
    ExprP cell;
    ExprP mutateLocal(const ExprP &e) override { return e->local == acc ? cell : e; }
  } swap;
  swap.acc = acc;
  swap.cell = cell;
  std::vector<StmtP> out;
  for (const StmtP &p : post) out.push_back(swap.mutate(p));
  return out;
}

/// A temporary of one cell per row, named after the accumulator it replaces.
std::shared_ptr<Tensor> rowCells(const Stmt &decl, const Nat &rows) {
  return temporary(decl.localName + "_rows", types::array(rows, types::scalar(decl.type)));
}

/// forall i (independent) { pre; acc = init; forall k [lo, hi) { ...; acc = acc op e }; post }
/// with k's bounds free of i or i plus a constant (a triangle), where the inner body reads
/// with unit stride in i but not in k: becomes, per block of rows, acc = init for every row, then for each k a contiguous sweep
/// over the rows, then per row pre and post. `pre` are declarations the reduction does not
/// read; `post` uses acc (gemv's `beta y + alpha acc`, the store). When post is just
/// `out[..i..] = acc` the rows accumulate into out itself, else into a temporary of a cell per
/// row. Each row still combines its k terms in the same order, so the result is identical.
StmtP interchangeReductionAt(const StmtP &s, const std::vector<StmtP> &items, size_t r);

StmtP interchangeReduction(const StmtP &s) {
  if (s->kind != StmtKind::Forall || s->forall != ForallKind::Parallel || s->userKind) return nullptr;
  std::vector<StmtP> items = itemsOf(s->body[0]);
  // The first of the row's reductions that gains (symv's row part or its column part).
  for (size_t r = 1; r + 1 < items.size(); ++r)
    if (items[r]->kind == StmtKind::Forall)
      if (StmtP t = interchangeReductionAt(s, items, r)) return t;
  return nullptr;
}

/// The interchange of the reduction items[r], declared by items[r - 1].
StmtP interchangeReductionAt(const StmtP &s, const std::vector<StmtP> &items, size_t r) {
  std::optional<RowReduction> rr = rowReduction(items, r);
  if (!rr || !s->lo.isZero()) return nullptr;
  const StmtP &decl = rr->decl;
  StmtP red = rr->red;
  const std::vector<StmtP> &pre = rr->pre, &post = rr->post;
  int64_t acc = rr->acc, i = s->var, k = red->var;
  // k's bounds: free of i, or i plus an offset free of i (a triangle or a band of rows). A loop
  // over the rest of a row after i (`drop(i + 1)`: k in [0, n - i - 1), reading k + i + 1) is
  // first shifted by i into that form (k in [i, n - 1), reading k + 1).
  Nat iv = Nat::var(NatVarId{i, s->varName});
  std::vector<StmtP> inner = rr->inner;
  ExprP upd = rr->update;
  if (StmtP shifted = shiftToPositions(*red, iv, i)) {
    red = shifted;
    inner = itemsOf(red->body[0]);
    upd = inner.back()->value;
  }
  std::optional<RowBound> klo = rowBound(red->lo, i), khi = rowBound(red->hi, i);
  if (!klo || !khi) return nullptr;
  // pre: what the row computes before (another reduction, declarations); it moves after the
  // sweep, so neither the initial value nor the reduction may read its locals, and it may not
  // write memory.
  for (const StmtP &p : pre) {
    bool movable = true;
    forEachStmt(p, [&](const StmtP &x) {
      if (x->kind == StmtKind::Assign || x->kind == StmtKind::Alloc || x->kind == StmtKind::Barrier) movable = false;
      if (x->kind == StmtKind::DeclLocal && (usesLocal(decl->value, x->local) || readsLocal(red, x->local))) movable = false;
    });
    if (!movable) return nullptr;
  }
  // post (it may reduce again, symv's column part) writes only tensors the reduction does not
  // read, and its last statement stores the row.
  std::set<int64_t> written;
  for (const StmtP &p : post) {
    bool other = false;
    forEachStmt(p, [&](const StmtP &x) {
      if (x->kind == StmtKind::Alloc || x->kind == StmtKind::Barrier) other = true;
      if (x->kind == StmtKind::Assign) written.insert(x->lhs->tensor->id);
    });
    if (other) return nullptr;
  }
  if (written.empty() || post.back()->kind != StmtKind::Assign) return nullptr;
  for (int64_t t : written)
    if (readsTensor(red, t)) return nullptr;
  const StmtP &store = post.back();
  bool direct = pre.empty() && post.size() == 1 && store->value->kind == ExprKind::Local && store->value->local == acc;
  if (direct)
    for (const Nat &ix : store->lhs->indices)
      if (ix.mentions(k)) return nullptr;
  // Worth it: some read walks rows contiguously but jumps along k, and none walks k
  // contiguously while jumping along rows.
  std::vector<const Expr *> reads;
  for (const StmtP &st : inner) accessesOf(st->value, reads);
  if (!sweepGains(reads, i, k)) return nullptr;

  // Where a row accumulates: out[..i..] itself, or its cell of a temporary.
  TensorP cells = direct ? nullptr : rowCells(*decl, s->hi);
  auto cellOf = [&](const Nat &row) -> ExprP {
    if (direct) return store->lhs;  // substituted at the row below
    return access(cells, {row}, {}, decl->type);
  };
  NatVarId blk = freshNatVar(s->varName + "b");
  Nat from = Nat::var(blk) * Nat(kRowBlock);
  Nat to = Nat::min(s->hi, from + Nat(kRowBlock));
  auto rows = [&](const std::string &name, const std::function<StmtP(const Nat &row)> &body) {
    NatVarId r = freshNatVar(name);
    return forall(r.id, name, from, to, body(Nat::var(r)), ForallKind::Serial, s->loc);
  };
  auto at = [&](const StmtP &st, const Nat &row) {
    NatSubst sub;
    sub.vars.emplace(i, row);
    return substitute(st, sub);
  };
  // cell = init
  StmtP initRows = rows(s->varName, [&](const Nat &row) { return at(assign(cellOf(row), decl->value), row); });
  // cell = cell op e, for each k, over the block's rows.
  StmtP sweep = rows(s->varName + "_r", [&](const Nat &row) {
    std::vector<StmtP> st(inner.begin(), inner.end() - 1);
    auto combine = std::make_shared<Expr>(*upd);
    combine->args[0] = cellOf(row);
    st.push_back(assign(cellOf(row), combine));
    return at(block(st), row);
  });
  auto kLoop = std::make_shared<Stmt>(*red);
  kLoop->forall = ForallKind::Serial;
  kLoop->body = {sweep};
  if (klo->rowRelative || khi->rowRelative) {
    // A triangle: the block's k range is the union of its rows' ranges, and at each k the
    // sweep runs over the rows whose range holds k (lo(i) <= k < hi(i)).
    Nat kv = Nat::var(NatVarId{k, red->varName});
    kLoop->lo = klo->rowRelative ? from + klo->offset : klo->offset;
    kLoop->hi = khi->rowRelative ? to - Nat(1) + khi->offset : khi->offset;
    auto rowsAtK = std::make_shared<Stmt>(*sweep);
    if (khi->rowRelative) rowsAtK->lo = Nat::max(from, kv - khi->offset + Nat(1));
    if (klo->rowRelative) rowsAtK->hi = Nat::min(to, kv - klo->offset + Nat(1));
    kLoop->body = {rowsAtK};
  }
  Nat blocks = Nat::div(s->hi + Nat(kRowBlock - 1), kRowBlock);
  auto nest = std::make_shared<Stmt>(*forall(blk.id, blk.name, Nat(0), blocks, block({initRows, kLoop}), ForallKind::Parallel, s->loc));
  if (direct) return nest;
  // Then per row, in a loop of its own over all rows (so a store at [..i..] is still at the
  // variable of the loop around it, cin/InPlace's condition for writing in place): pre, then
  // post reading the row's cell where it read acc.
  std::vector<StmtP> finish = pre;
  for (const StmtP &p : withCell(post, acc, cellOf(iv))) finish.push_back(p);
  auto finishRows = std::make_shared<Stmt>(*s);
  finishRows->body = {block(finish)};
  return allocTemp(cells, block({nest, finishRows}));
}

/// A band recurrence's half-width: w where `hi`, a row reduction's bound, is i - max(0, i - w)
/// with w free of i and k (the row's first column max(0, i - w), its terms at lo + k); nullopt
/// for any other bound.
std::optional<Nat> bandHalfWidth(const Nat &hi, const Nat &iv, int64_t i, int64_t k) {
  const Nat lo = iv - hi;
  const std::vector<Nat::Term> &terms = lo.terms();
  if (terms.size() != 1 || terms[0].coeff != Rat(1) || terms[0].mono.factors.size() != 1 ||
      terms[0].mono.factors[0].second != 1)
    return std::nullopt;
  const NatAtomP &atom = terms[0].mono.factors[0].first;
  if (atom->kind != NatAtomKind::Max || atom->args.size() != 2) return std::nullopt;
  for (int z = 0; z < 2; ++z) {
    if (!atom->args[z].isZero()) continue;
    Nat w = iv - atom->args[1 - z];
    if (!w.mentions(i) && !w.mentions(k)) return w;
  }
  return std::nullopt;
}

/// Steps of a right-looking recurrence taken as one block: after the block's own steps, each
/// later row adds the block's kStepBlock terms at once, so that a row's cell is loaded and
/// stored once per eight multiply-adds (four: dtrsm LLN 2000 one core 0.39 s, eight: 0.35 s;
/// OpenBLAS 0.17), and the group's columns read the block's columns of the triangle from the
/// L1 cache (kLaterRows below).
constexpr int64_t kStepBlock = 8;
/// The later rows of a group's block of steps, in blocks of this many (rightLookingRecurrence).
constexpr int64_t kLaterRows = 256;

/// A recurrence whose element i sums terms of the elements before it (`recur` in a forward
/// substitution): forall i (in order) { pre; acc = init; forall k [0, i) { ...; acc = acc op
/// e(i, k) }; post, writing R[i] } where e reads R only at [k] and walks memory with a stride
/// along k but contiguously along i (a column-major triangle's rows). Becomes right-looking:
/// every row's accumulator (its cell) starts at init; then, by blocks of kStepBlock steps, each
/// step i of the block computes R[i] from its cell (post) and the block's rows after i add
/// their term of k = i; then every row after the block adds the block's terms, k in order, in
/// one contiguous sweep down the block's columns. Row r still adds its terms in the order
/// k = 0, 1, ..., r - 1, so the result is identical.
///
/// i's body may instead be one loop c over a group of independent recurrences (a schedule's
/// `split(q, qo, qi, 8); reorder(qi, i)` on the columns of a trsm: R[c, i], read at [c, k]):
/// the group's cells are an array over c (of the loop's constant extent bound), and each block
/// of steps runs every column of the group, so that the triangle's block of columns is read
/// from memory once per group instead of once per recurrence.
///
/// A band's recurrence (`lowerSv`: row i sums over columns [max(0, i - w), i), as k in [0, i -
/// lo) at column lo + k) takes the same sweep over its band alone: a step's later rows in the
/// block only up to i + w, the block's later rows only up to its last step + w, the last of
/// them from their band's first column (tbsv L N and U N: the band's rows are lda - 1 apart).
StmtP rightLookingRecurrence(const StmtP &s) {
  if (s->kind != StmtKind::Forall || s->forall != ForallKind::Serial || s->userKind || !s->lo.isZero()) return nullptr;
  int64_t i = s->var;
  Nat iv = Nat::var(NatVarId{i, s->varName});
  std::vector<StmtP> items = itemsOf(s->body[0]);
  StmtP group;
  std::optional<int64_t> groupExtent;
  if (items.size() == 1 && items[0]->kind == StmtKind::Forall && items[0]->forall != ForallKind::Reduction &&
      !items[0]->userKind && !items[0]->lo.mentions(i) && !items[0]->hi.mentions(i)) {
    group = items[0];
    groupExtent = constExtentBound(group->lo, group->hi);
    if (!groupExtent) return nullptr;
    items = itemsOf(group->body[0]);
  }
  size_t r = 0;
  while (r < items.size() && items[r]->kind != StmtKind::Forall) ++r;
  std::optional<RowReduction> rr = rowReduction(items, r);
  if (!rr) return nullptr;
  const StmtP &decl = rr->decl, &red = rr->red;
  const std::vector<StmtP> &pre = rr->pre, &post = rr->post, &inner = rr->inner;
  const ExprP &upd = rr->update;
  int64_t acc = rr->acc, k = red->var;
  if (!red->lo.isZero() || anyExpr(decl->value, [&](const Expr &x) { return natMentions(x, i); })) return nullptr;
  // A whole triangle's row runs k over [0, i); a band's over [0, i - lo(i)), at column lo(i) + k.
  std::optional<Nat> band;
  if (red->hi != iv) {
    band = bandHalfWidth(red->hi, iv, i, k);
    if (!band || group) return nullptr;
  }
  const Nat rowStart = band ? iv - red->hi : Nat(0);  // lo(i): the row's first column
  for (const StmtP &p : pre)
    if (p->kind != StmtKind::DeclLocal || readsLocal(red, p->local) || usesLocal(decl->value, p->local)) return nullptr;
  // The recurrence's column: in a group, every index but the last of what post writes is the
  // group's variable plus an offset free of it (one recurrence per c), else there is none.
  auto column = [&](const std::vector<Nat> &ix, const Nat &last) {
    if (ix.empty() || ix.back() != last) return false;
    if (!group) return ix.size() == 1;
    if (ix.size() != 2) return false;
    Nat off = ix[0] - Nat::var(NatVarId{group->var, group->varName});
    return !off.mentions(group->var) && !off.mentions(i) && !off.mentions(k);
  };
  // post: straight-line; the tensors it writes are read in the reduction only at [c, k] (the
  // element an earlier step of the same recurrence wrote), and written by post only at [c, i].
  std::set<int64_t> written;
  std::vector<Nat> columnIndex;
  bool straight = true;
  for (const StmtP &p : post)
    forEachStmt(p, [&](const StmtP &x) {
      if (x->kind == StmtKind::Forall || x->kind == StmtKind::Alloc || x->kind == StmtKind::Barrier) straight = false;
      if (x->kind == StmtKind::Assign) {
        written.insert(x->lhs->tensor->id);
        const std::vector<Nat> &ix = x->lhs->indices;
        if (!column(ix, iv)) straight = false;
        else if (columnIndex.empty()) columnIndex.assign(ix.begin(), ix.end() - 1);
        else if (!std::equal(columnIndex.begin(), columnIndex.end(), ix.begin())) straight = false;
      }
    });
  if (!straight || written.empty()) return nullptr;
  Nat kv = Nat::var(NatVarId{k, red->varName});
  std::vector<Nat> atK = columnIndex;
  atK.push_back(rowStart + kv);
  bool onlyAtK = true;
  auto readsWritten = [&](const ExprP &v, bool allowAtK) {
    anyExpr(v, [&](const Expr &e) {
      if (e.kind == ExprKind::Access && written.count(e.tensor->id) && (!allowAtK || e.indices != atK)) onlyAtK = false;
      return false;
    });
  };
  forEachStmt(red, [&](const StmtP &x) { readsWritten(x->value, true); });
  readsWritten(decl->value, false);  // every cell starts before any step writes
  if (!onlyAtK) return nullptr;
  // Strides along the row and its column (for a band, the terms read at column c = lo(i) + k).
  std::vector<StmtP> innerAtColumn;
  NatSubst toColumn;
  if (band) toColumn.vars.emplace(k, kv - rowStart);
  for (const StmtP &st : inner) innerAtColumn.push_back(band ? substitute(st, toColumn) : st);
  std::vector<const Expr *> reads;
  for (const StmtP &st : innerAtColumn) accessesOf(st->value, reads);
  if (!sweepGains(reads, i, k)) return nullptr;

  // cells[c - lo, row] in a group, cells[row] otherwise.
  auto cells = rowCells(*decl, s->hi);
  if (group) cells->type = types::array(Nat(*groupExtent), cells->type);
  auto cellAt = [&](const Nat &c, const Nat &row) {
    std::vector<Nat> ix;
    if (group) ix.push_back(c - group->lo);
    ix.push_back(row);
    return access(cells, ix, {}, decl->type);
  };
  Nat cv = group ? Nat::var(NatVarId{group->var, group->varName}) : Nat(0);
  // `body` over the group's columns (a copy of its loop with variable `var`), or as it is.
  auto overGroup = [&](const std::function<StmtP(const Nat &c)> &body) -> StmtP {
    if (!group) return body(Nat(0));
    NatVarId c = freshNatVar(group->varName);
    NatSubst toC;
    toC.vars.emplace(group->var, Nat::var(c));
    return forall(c.id, c.name, group->lo, group->hi, substitute(body(Nat::var(c)), toC), ForallKind::Serial, group->loc);
  };
  // Row r's term of column `at`: the reduction's body at (i, k) = (r, at - lo(r)) on r's cell.
  auto term = [&](const Nat &row, const Nat &at) {
    NatSubst rowOnly, sub;
    rowOnly.vars.emplace(i, row);
    sub.vars.emplace(i, row);
    sub.vars.emplace(k, at - substitute(rowStart, rowOnly));
    std::vector<StmtP> st(inner.begin(), inner.end() - 1);
    auto combine = std::make_shared<Expr>(*upd);
    combine->args[0] = cellAt(cv, iv);
    st.push_back(assign(cellAt(cv, iv), combine));
    return substitute(block(st), sub);
  };
  NatVarId r0 = freshNatVar(s->varName), blk = freshNatVar(s->varName + "b");
  StmtP init = overGroup([&](const Nat &c) {
    return forall(r0.id, r0.name, Nat(0), s->hi, assign(cellAt(c, Nat::var(r0)), decl->value), ForallKind::Parallel, s->loc);
  });
  Nat from = Nat::var(blk) * Nat(kStepBlock), to = Nat::min(s->hi, from + Nat(kStepBlock));
  // The block's steps: pre, post from the row's cell, then its rows after i add e(r, i).
  auto steps = [&](const Nat &c) -> StmtP {
    std::vector<StmtP> step = pre;
    for (const StmtP &p : withCell(post, acc, cellAt(c, iv))) step.push_back(p);
    NatVarId r1 = freshNatVar(s->varName + "_r");
    Nat reach = band ? Nat::min(to, iv + *band + Nat(1)) : to;  // a band's rows that hold column i
    step.push_back(forall(r1.id, r1.name, iv + Nat(1), reach, term(Nat::var(r1), iv), ForallKind::Serial, s->loc));
    auto st = std::make_shared<Stmt>(*s);
    st->lo = from;
    st->hi = to;
    st->body = {block(step)};
    return st;
  };
  // Then the rows [lo, hi) after the block add its terms (none after a last, partial block): t
  // runs a constant kStepBlock times, so that LLVM unrolls it and vectorises the rows.
  auto later = [&](const Nat &lo, const Nat &hi) -> StmtP {
    NatVarId r2 = freshNatVar(s->varName + "_r"), t = freshNatVar(red->varName);
    auto terms = std::make_shared<Stmt>(
        *forall(t.id, t.name, Nat(0), Nat(kStepBlock), term(Nat::var(r2), from + Nat::var(t)), ForallKind::Serial, s->loc));
    terms->unroll = static_cast<int>(kStepBlock);
    return forall(r2.id, r2.name, lo, hi, terms, ForallKind::Serial, s->loc);
  };
  StmtP blockSteps;
  if (band) {
    // Rows up to from + w hold all of the block's columns; those after, up to its last column
    // + w, the block's columns from their first, r - w.
    Nat first = from + Nat(kStepBlock), whole = Nat::min(s->hi, from + *band + Nat(1));
    Nat edge = Nat::max(first, whole), last = Nat::min(s->hi, from + Nat(kStepBlock) + *band);
    NatVarId r3 = freshNatVar(s->varName + "_r"), t = freshNatVar(red->varName);
    Nat r3v = Nat::var(r3);
    StmtP partial = forall(r3.id, r3.name, edge, last,
                           forall(t.id, t.name, r3v - *band - from, Nat(kStepBlock), term(r3v, from + Nat::var(t)),
                                  ForallKind::Serial, s->loc),
                           ForallKind::Serial, s->loc);
    blockSteps = block({steps(Nat(0)), later(first, whole), partial});
  } else if (!group) {
    blockSteps = block({steps(Nat(0)), later(from + Nat(kStepBlock), s->hi)});
  } else {
    // A group's columns each take the block's steps, then the later rows in blocks of
    // kLaterRows, every column of the group in turn over a block of rows: the triangle's part
    // they read (kLaterRows x kStepBlock elements, 16 KB of f64) stays in the L1 cache for the
    // group's columns, where a column's whole sweep (2000 rows: 128 KB) had to come from L2
    // again for each of them (dtrsm LLN 2000, eight columns a group, one core: 0.59 -> 0.47 s).
    // A column's later rows only read what its own steps computed.
    NatVarId rb = freshNatVar(s->varName + "_rb");
    Nat first = from + Nat(kStepBlock) + Nat::var(rb) * Nat(kLaterRows);
    StmtP rows = overGroup([&](const Nat &) { return later(first, Nat::min(s->hi, first + Nat(kLaterRows))); });
    Nat count = Nat::div(s->hi - from - Nat(kStepBlock) + Nat(kLaterRows - 1), kLaterRows);
    blockSteps = block({overGroup(steps), forall(rb.id, rb.name, Nat(0), count, rows, ForallKind::Serial, s->loc)});
  }
  StmtP blocks = forall(blk.id, blk.name, Nat(0), Nat::div(s->hi + Nat(kStepBlock - 1), kStepBlock), blockSteps,
                        ForallKind::Serial, s->loc);
  return allocTemp(cells, block({init, blocks}));
}

StmtP interchangeAll(const StmtP &s) {
  if (!s) return s;
  if (StmtP t = interchangeReduction(s)) return t;
  if (StmtP t = rightLookingRecurrence(s)) return t;
  auto c = std::make_shared<Stmt>(*s);
  for (StmtP &b : c->body) b = interchangeAll(b);
  return c;
}

}  // namespace

StmtP defaultCpuSchedule(const StmtP &body) { return rewrite(interchangeAll(body), false); }

namespace {

StmtP gpuRewrite(const StmtP &s, bool inside) {
  auto copy = std::make_shared<Stmt>(*s);
  bool inner = inside;
  if (s->kind == StmtKind::Forall) {
    if (s->userKind || isGpuLevel(s->forall)) {
      inner = true;
    } else if (s->forall == ForallKind::Parallel) {
      copy->forall = inside ? ForallKind::Serial : ForallKind::GpuGlobal;
      // Rows of a compressed level: the CUDA back end may give each row a vector of lanes.
      if (!inside && s->lo.isZero()) copy->balanceBy = rowOffsetsOf(s->body[0], s->var, /*loose=*/false);
      inner = true;
    } else {
      inner = true;  // a serial loop runs in one thread: what it contains does too
    }
  }
  for (StmtP &b : copy->body)
    if (b) b = gpuRewrite(b, inner);
  return copy;
}

}  // namespace

StmtP defaultGpuSchedule(const StmtP &body) { return gpuRewrite(body, false); }

bool scheduleApplies(const tir::Schedule &s, const tir::Export &ex, bool cuda) {
  return (s.exportName == ex.cname || s.exportName == ex.def->name) && (s.target == "cuda") == cuda;
}

std::set<std::string> precomputeNames(const tir::Program &p, const tir::Export &ex, bool cuda) {
  std::set<std::string> names;
  for (const tir::Schedule &s : p.schedules)
    if (scheduleApplies(s, ex, cuda))
      tir::forEachCommand(s.commands, [&](const tir::ScheduleCommand &c) {
        if (const auto *p = std::get_if<tir::Precompute>(&c); p && p->array.ok) names.insert(p->array.text);
      });
  return names;
}

}  // namespace spl::cin
