/// \file SpmvPattern.cpp: a CSR SpMV recognised in a kernel (see the header).
/// The shape matched is what the lowering makes of a row-wise map of a reduce(+, 0) over the
/// row's (column, value) pairs with body value * x@column (either order of the factors, the
/// accumulator on either side of +):
///   forall i in [0, n) { local acc = 0; forall k in segment(offs @ i) { local j = cols[i, k];
///   acc = acc + vals[i, k] * x[j] }; out[i] = acc }
/// and, for the transposed product, what it makes of an einsum y[j] = A[i, j] * x[i]:
///   forall z in [0, m) { out[z] = 0 }; forall i in [0, n) { forall k in segment(offs @ i) {
///   local j = cols[i, k]; out[j] = out[j] + vals[i, k] * x[i] } }
/// and, for C = A B, what it makes of an einsum C[i, l] = A[i, j] * B[j, l]:
///   forall z0 in [0, n) { forall z1 in [0, k) { out[z0, z1] = 0 } }; forall i in [0, n) {
///   forall p in segment(offs @ i) { local j = cols[i, p]; forall l in [0, k) {
///   out[i, l] = out[i, l] + vals[i, p] * B[j, l] } } }
#include "cin/SpmvPattern.h"

#include <fmt/format.h>

#include <algorithm>

namespace spl::cin {
namespace {

/// The statements of `s` with blocks opened, in order.
void flatInto(const StmtP &s, std::vector<const Stmt *> &out) {
  if (!s) return;
  if (s->kind == StmtKind::Block) {
    for (const StmtP &c : s->body) flatInto(c, out);
    return;
  }
  out.push_back(s.get());
}

std::vector<const Stmt *> flat(const StmtP &s) {
  std::vector<const Stmt *> out;
  flatInto(s, out);
  return out;
}

bool isLoopVar(const Nat &n, int64_t var) {
  std::optional<NatVarId> v = n.asVar();
  return v && v->id == var;
}

bool isLocal(const ExprP &e, int64_t id) { return e && e->kind == ExprKind::Local && e->local == id; }

bool isZero(const ExprP &e) {
  return e && e->kind == ExprKind::Const && (e->type == Scalar::F32 || e->type == Scalar::F64 ? e->fval == 0 : e->ival == 0);
}

/// An access of parameter `param`'s tensor (its first leaf) at the loop variables `vars`.
bool accessAtLoops(const ExprP &e, const Kernel &k, size_t param, std::initializer_list<int64_t> vars) {
  if (!e || e->kind != ExprKind::Access || !e->tensor || !k.params[param].tensor) return false;
  if (e->tensor->id != k.params[param].tensor->id || e->indices.size() != vars.size()) return false;
  size_t d = 0;
  for (int64_t v : vars)
    if (!isLoopVar(e->indices[d++], v)) return false;
  return true;
}

/// x[j]: parameter `param`'s tensor at the value of local `j`.
bool accessAtLocal(const ExprP &e, const Kernel &k, size_t param, int64_t j) {
  if (!e || e->kind != ExprKind::Access || !e->tensor || !k.params[param].tensor) return false;
  return e->tensor->id == k.params[param].tensor->id && e->indices.size() == 1 && e->indices[0] == Nat::value(NatVarId{j, ""});
}

/// The kernel parameter whose tensor (and tuple component: csr64's values and columns are two
/// components of one array) an access reads or writes; -1 if none.
int paramOfAccess(const Kernel &k, const ExprP &e) {
  const std::vector<KernelParam> &p = k.params;
  for (size_t q = 0; q < p.size(); ++q)
    if (e && e->kind == ExprKind::Access && e->tensor && p[q].tensor && p[q].tensor->id == e->tensor->id && p[q].abi.path == e->leaf)
      return static_cast<int>(q);
  return -1;
}

/// The nat parameter a loop's upper bound `hi` is (the rows' n, the columns' m); -1 if none.
int natParamBounding(const Kernel &k, const Nat &hi) {
  for (size_t q = 0; q < k.params.size(); ++q)
    if (k.params[q].abi.role == tir::AbiParam::Role::Nat && isLoopVar(hi, k.params[q].natVar)) return static_cast<int>(q);
  return -1;
}

/// The offsets parameter of `entries` when it runs over row i's whole segment (offs@i to
/// offs@(i+1)); -1 otherwise.
int rowSegmentParam(const Kernel &k, const Stmt &entries, int64_t i) {
  if (!entries.segment || !entries.segment->whole || entries.segment->lengths || !isLoopVar(entries.segment->parent, i)) return -1;
  for (size_t q = 0; q < k.params.size(); ++q)
    if (k.params[q].tensor && k.params[q].tensor->id == entries.segment->array.id) return static_cast<int>(q);
  return -1;
}

/// Why no plan can run in `k`'s place whatever it computes (a cuda kernel, a checked one), or
/// nullopt.
std::optional<std::string> whyNotPlannable(const Kernel &k) {
  if (k.cuda) return "it is a cuda kernel (plans are for the CPU)";
  if (std::any_of(k.params.begin(), k.params.end(), [](const KernelParam &q) { return q.abi.role == tir::AbiParam::Role::Count; }))
    return "under --checked its C function takes element counts, and a plan's kernels take none (plans run unchecked)";
  return std::nullopt;
}

/// The row loop a transposed product and an SpMM share: `rows` is forall i in [0, n) {
/// forall p in segment(offs @ i) { local j = cols[i, p]; NEXT } }, NEXT a statement of kind
/// `next` (`nextWhy` says what it should have been).
struct RowEntries {
  int nParam = -1, offsParam = -1, colsParam = -1;
  int64_t i = 0, p = 0, j = 0;  // the row, the position in it, the column's local
  const Stmt *next = nullptr;
};

std::optional<RowEntries> rowEntries(const Kernel &k, const Stmt &rows, StmtKind next, const char *nextWhy, std::string &whyNot) {
  auto no = [&](std::string why) -> std::optional<RowEntries> {
    whyNot = std::move(why);
    return std::nullopt;
  };
  RowEntries r;
  r.nParam = natParamBounding(k, rows.hi);
  if (!rows.lo.isZero() || r.nParam < 0) return no("its second loop does not run over the n rows");
  r.i = rows.var;
  std::vector<const Stmt *> row = flat(rows.body.empty() ? nullptr : rows.body[0]);
  if (row.size() != 1 || row[0]->kind != StmtKind::Forall) return no("a row is not one loop over its entries");
  const Stmt &entries = *row[0];
  r.offsParam = rowSegmentParam(k, entries, r.i);
  if (r.offsParam < 0) return no("the inner loop does not run over row i's entries (offs@i to offs@(i+1))");
  std::vector<const Stmt *> body = flat(entries.body.empty() ? nullptr : entries.body[0]);
  if (body.size() != 2 || body[0]->kind != StmtKind::DeclLocal || body[1]->kind != next) return no(nextWhy);
  r.p = entries.var, r.j = body[0]->local;
  r.colsParam = paramOfAccess(k, body[0]->value);
  if (r.colsParam < 0 || !accessAtLoops(body[0]->value, k, static_cast<size_t>(r.colsParam), {r.i, r.p}))
    return no("an entry's column is not cols[i, p]");
  r.next = body[1];
  return r;
}

/// The seven parameters of r stand for the runtime's kernel type.
std::optional<CsrSpmv> checkParameters(const Kernel &k, const CsrSpmv &r, std::string &whyNot) {
  const std::vector<KernelParam> &p = k.params;
  using Role = tir::AbiParam::Role;
  const auto [nParam, mParam, offsParam, colsParam, valsParam, xParam, outParam] = r.paramOf;
  const Scalar elem = r.elem;
  // The runtime's kernel type: nats by value, offsets and columns as 32-bit indices, the
  // values, x and the result in the element type; each parameter once.
  auto is = [&](int q, Role role, const char *ctype) { return q >= 0 && p[q].abi.role == role && (!ctype || p[q].abi.ctype == ctype); };
  bool types = is(nParam, Role::Nat, nullptr) && is(mParam, Role::Nat, nullptr) &&
               (is(offsParam, Role::Buffer, "const int32_t *") || is(offsParam, Role::Nats, "const int32_t *")) &&
               is(colsParam, Role::Buffer, "const int32_t *") && p[colsParam].abi.isIndex && is(valsParam, Role::Buffer, nullptr) &&
               is(xParam, Role::Buffer, nullptr) && is(outParam, Role::OutBuffer, nullptr) && p[valsParam].abi.elem == elem &&
               p[xParam].abi.elem == elem;
  std::array<int, 7> sorted = r.paramOf;
  std::sort(sorted.begin(), sorted.end());
  if (!types || std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    whyNot = "its C parameters are not those of a CSR SpMV: n and m (nats), offs (i32), cols (32-bit indices), and vals, x "
             "and the result all three f32 or all three f64";
    return std::nullopt;
  }
  return r;
}

/// y = A^T x: `zeroing` is forall z in [0, m) { out[z] = 0 }, `rows` forall i in [0, n) {
/// forall k in segment(offs @ i) { local j = cols[i, k]; out[j] = out[j] + vals[i, k] * x[i] } }
/// (either order of the factors, out[j] on either side of +).
std::optional<CsrSpmv> recogniseTransposed(const Kernel &k, const Stmt &zeroing, const Stmt &rows, Scalar elem,
                                           std::string &whyNot) {
  auto no = [&](std::string why) -> std::optional<CsrSpmv> {
    whyNot = std::move(why);
    return std::nullopt;
  };
  // forall z in [0, m) { out[z] = 0 }
  std::vector<const Stmt *> zero = flat(zeroing.body.empty() ? nullptr : zeroing.body[0]);
  const int mParam = natParamBounding(k, zeroing.hi);
  if (!zeroing.lo.isZero() || mParam < 0 || zero.size() != 1 || zero[0]->kind != StmtKind::Assign || zero[0]->compound ||
      !isZero(zero[0]->value))
    return no("its body is not one loop over the rows (nor the zeroing of a transposed product's result and then one)");
  const int outParam = paramOfAccess(k, zero[0]->lhs);
  if (outParam < 0 || !accessAtLoops(zero[0]->lhs, k, static_cast<size_t>(outParam), {zeroing.var}))
    return no("the transposed product's first loop does not zero its result");
  // forall i in [0, n) { forall p in segment(offs @ i) { local j = cols[i, p]; out[j] = out[j] + vals[i, p] * x[i] } }
  std::optional<RowEntries> re = rowEntries(k, rows, StmtKind::Assign, "an entry's term is not added to out[column]", whyNot);
  if (!re) return std::nullopt;
  const int nParam = re->nParam, offsParam = re->offsParam, colsParam = re->colsParam;
  const int64_t i = re->i, kv = re->p, j = re->j;
  const Stmt &add = *re->next;
  if (add.compound || paramOfAccess(k, add.lhs) != outParam || !accessAtLocal(add.lhs, k, static_cast<size_t>(outParam), j))
    return no("an entry's term is not added to out[column]");
  const ExprP &sum = add.value;
  if (!sum || sum->kind != ExprKind::Binary || sum->binop != ast::BinOp::Add) return no("an entry's term is not added to out[column]");
  auto isOutJ = [&](const ExprP &e) { return paramOfAccess(k, e) == outParam && accessAtLocal(e, k, static_cast<size_t>(outParam), j); };
  const ExprP term = isOutJ(sum->args[0]) ? sum->args[1] : isOutJ(sum->args[1]) ? sum->args[0] : nullptr;
  if (!term || term->kind != ExprKind::Binary || term->binop != ast::BinOp::Mul) return no("an entry's term is not value * x[row]");
  int valsParam = -1, xParam = -1;
  for (int side = 0; side < 2 && valsParam < 0; ++side) {
    const ExprP &a = term->args[side], &b = term->args[1 - side];
    const int va = paramOfAccess(k, a), xb = paramOfAccess(k, b);
    if (va >= 0 && xb >= 0 && accessAtLoops(a, k, static_cast<size_t>(va), {i, kv}) && accessAtLoops(b, k, static_cast<size_t>(xb), {i}))
      valsParam = va, xParam = xb;
  }
  if (valsParam < 0) return no("an entry's term is not value * x[row]");
  CsrSpmv r;
  r.elem = elem;
  r.transposed = true;
  r.paramOf = {nParam, mParam, offsParam, colsParam, valsParam, xParam, outParam};
  return checkParameters(k, r, whyNot);
}

}  // namespace

std::optional<CsrSpmv> recogniseCsrSpmv(const Kernel &k, std::string &whyNot) {
  auto no = [&](std::string why) -> std::optional<CsrSpmv> {
    whyNot = std::move(why);
    return std::nullopt;
  };
  if (std::optional<std::string> why = whyNotPlannable(k)) return no(*why);
  const std::vector<KernelParam> &p = k.params;
  using Role = tir::AbiParam::Role;
  if (p.size() != 7)
    return no(fmt::format("its C function takes {} parameters, where a CSR SpMV takes 7 (n, m, offs, cols, vals, x, out)", p.size()));
  // Each operand's parameter is read off the body below (paramOfAccess).
  auto paramOf = [&](const ExprP &e) { return paramOfAccess(k, e); };
  const Scalar elem = [&] {
    for (const KernelParam &q : p)
      if (q.abi.role == Role::OutBuffer) return q.abi.elem;
    return Scalar::Bool;
  }();
  if (elem != Scalar::F32 && elem != Scalar::F64) return no("its result is not an array of f32 or f64");

  // forall i in [0, n), or the transposed product's zeroing and then that loop
  std::vector<const Stmt *> top = flat(k.body);
  if (top.size() == 2 && top[0]->kind == StmtKind::Forall && top[1]->kind == StmtKind::Forall)
    return recogniseTransposed(k, *top[0], *top[1], elem, whyNot);
  if (top.size() != 1 || top[0]->kind != StmtKind::Forall) return no("its body is not one loop over the rows");
  const Stmt &rows = *top[0];
  const int nParam = natParamBounding(k, rows.hi);
  if (!rows.lo.isZero() || nParam < 0) return no("its outer loop does not run over the n rows");
  const int64_t i = rows.var;

  // local acc = 0; forall k in segment(offs @ i) { ... }; out[i] = acc
  std::vector<const Stmt *> row = flat(rows.body.empty() ? nullptr : rows.body[0]);
  if (row.size() != 3 || row[0]->kind != StmtKind::DeclLocal || row[1]->kind != StmtKind::Forall ||
      row[2]->kind != StmtKind::Assign)
    return no("a row is not one sum over its entries written to the result");
  const int64_t acc = row[0]->local;
  if (row[0]->type != elem || !isZero(row[0]->value)) return no("a row's sum does not start at 0");
  const Stmt &entries = *row[1];
  const int offsParam = rowSegmentParam(k, entries, i);
  if (offsParam < 0) return no("the inner loop does not run over row i's entries (offs@i to offs@(i+1))");
  if (entries.forall != ForallKind::Reduction && entries.forall != ForallKind::Vector)
    return no("the row's sum is a fold, not a reduce (its order of additions is part of the result)");
  const Stmt &store = *row[2];
  const int outParam = paramOf(store.lhs);
  if (store.compound || outParam < 0 || !accessAtLoops(store.lhs, k, outParam, {i}) || !isLocal(store.value, acc))
    return no("a row's sum is not written to out[i]");

  // local j = cols[i, k]; acc = acc + vals[i, k] * x[j]
  std::vector<const Stmt *> body = flat(entries.body.empty() ? nullptr : entries.body[0]);
  if (body.size() != 2 || body[0]->kind != StmtKind::DeclLocal || body[1]->kind != StmtKind::SetLocal)
    return no("an entry's term is not value * x[column]");
  const int64_t kv = entries.var, j = body[0]->local;
  const int colsParam = paramOf(body[0]->value);
  if (colsParam < 0 || !accessAtLoops(body[0]->value, k, colsParam, {i, kv})) return no("an entry's column is not cols[i, k]");
  const Stmt &add = *body[1];
  const ExprP &sum = add.value;
  if (add.local != acc || !sum || sum->kind != ExprKind::Binary || sum->binop != ast::BinOp::Add)
    return no("the row's terms are not added up");
  ExprP term = isLocal(sum->args[0], acc) ? sum->args[1] : isLocal(sum->args[1], acc) ? sum->args[0] : nullptr;
  if (!term || term->kind != ExprKind::Binary || term->binop != ast::BinOp::Mul)
    return no("an entry's term is not value * x[column]");
  int valsParam = -1, xParam = -1;
  for (int side = 0; side < 2 && valsParam < 0; ++side) {
    const ExprP &a = term->args[side], &b = term->args[1 - side];
    const int va = paramOf(a), xb = paramOf(b);
    if (va >= 0 && xb >= 0 && accessAtLoops(a, k, va, {i, kv}) && accessAtLocal(b, k, xb, j)) valsParam = va, xParam = xb;
  }
  if (valsParam < 0) return no("an entry's term is not value * x[column]");
  int mParam = -1;
  for (size_t q = 0; q < p.size(); ++q)
    if (p[q].abi.role == Role::Nat && static_cast<int>(q) != nParam) mParam = static_cast<int>(q);
  CsrSpmv r;
  r.elem = elem;
  r.paramOf = {nParam, mParam, offsParam, colsParam, valsParam, xParam, outParam};
  return checkParameters(k, r, whyNot);
}

std::optional<CsrSpmm> recogniseCsrSpmm(const Kernel &k, std::string &whyNot) {
  auto no = [&](std::string why) -> std::optional<CsrSpmm> {
    whyNot = std::move(why);
    return std::nullopt;
  };
  if (std::optional<std::string> why = whyNotPlannable(k)) return no(*why);
  const std::vector<KernelParam> &p = k.params;
  using Role = tir::AbiParam::Role;
  if (p.size() != 8)
    return no(fmt::format("its C function takes {} parameters, where a CSR SpMM takes 8 (n, m, k, offs, vals, cols, B, out)", p.size()));
  std::vector<const Stmt *> top = flat(k.body);
  if (top.size() != 2 || top[0]->kind != StmtKind::Forall || top[1]->kind != StmtKind::Forall)
    return no("its body is not the zeroing of its result and then one loop over the rows");
  // forall z0 in [0, n) { forall z1 in [0, k) { out[z0, z1] = 0 } }
  const Stmt &zeroRows = *top[0];
  std::vector<const Stmt *> zeroCols = flat(zeroRows.body.empty() ? nullptr : zeroRows.body[0]);
  if (zeroCols.size() != 1 || zeroCols[0]->kind != StmtKind::Forall) return no("its first loop does not zero an n x k result");
  std::vector<const Stmt *> zero = flat(zeroCols[0]->body.empty() ? nullptr : zeroCols[0]->body[0]);
  const int nParam = natParamBounding(k, zeroRows.hi), kParam = natParamBounding(k, zeroCols[0]->hi);
  if (!zeroRows.lo.isZero() || !zeroCols[0]->lo.isZero() || nParam < 0 || kParam < 0 || nParam == kParam || zero.size() != 1 ||
      zero[0]->kind != StmtKind::Assign || zero[0]->compound || !isZero(zero[0]->value))
    return no("its first loop does not zero an n x k result");
  const int outParam = paramOfAccess(k, zero[0]->lhs);
  if (outParam < 0 || !accessAtLoops(zero[0]->lhs, k, static_cast<size_t>(outParam), {zeroRows.var, zeroCols[0]->var}))
    return no("its first loop does not zero an n x k result");
  // forall i in [0, n) { forall p in segment(offs @ i) { local j = cols[i, p]; forall l in [0, k) { ... } } }
  std::optional<RowEntries> re =
      rowEntries(k, *top[1], StmtKind::Forall, "an entry's terms are not added to a row of the result", whyNot);
  if (!re) return std::nullopt;
  if (re->nParam != nParam) return no("its second loop does not run over the n rows");
  const int offsParam = re->offsParam, colsParam = re->colsParam;
  const int64_t i = re->i, pv = re->p, j = re->j;
  const Stmt &cols = *re->next;
  if (!cols.lo.isZero() || natParamBounding(k, cols.hi) != kParam) return no("an entry's terms do not run over the k columns");
  const int64_t l = cols.var;
  std::vector<const Stmt *> term = flat(cols.body.empty() ? nullptr : cols.body[0]);
  if (term.size() != 1 || term[0]->kind != StmtKind::Assign || term[0]->compound)
    return no("an entry's term is not added to out[i, l]");
  const Stmt &add = *term[0];
  auto isOutIL = [&](const ExprP &e) {
    return paramOfAccess(k, e) == outParam && accessAtLoops(e, k, static_cast<size_t>(outParam), {i, l});
  };
  if (!isOutIL(add.lhs)) return no("an entry's term is not added to out[i, l]");
  const ExprP &sum = add.value;
  if (!sum || sum->kind != ExprKind::Binary || sum->binop != ast::BinOp::Add) return no("an entry's term is not added to out[i, l]");
  const ExprP product = isOutIL(sum->args[0]) ? sum->args[1] : isOutIL(sum->args[1]) ? sum->args[0] : nullptr;
  if (!product || product->kind != ExprKind::Binary || product->binop != ast::BinOp::Mul)
    return no("an entry's term is not value * B[column, l]");
  // B[j, l]: B's tensor at the column's value and the loop over k.
  auto isBjl = [&](const ExprP &e, int q) {
    return q >= 0 && e && e->kind == ExprKind::Access && e->tensor && k.params[q].tensor && e->tensor->id == k.params[q].tensor->id &&
           e->indices.size() == 2 && e->indices[0] == Nat::value(NatVarId{j, ""}) && isLoopVar(e->indices[1], l);
  };
  int valsParam = -1, bParam = -1;
  for (int side = 0; side < 2 && valsParam < 0; ++side) {
    const ExprP &a = product->args[side], &b = product->args[1 - side];
    const int va = paramOfAccess(k, a), bb = paramOfAccess(k, b);
    if (va >= 0 && accessAtLoops(a, k, static_cast<size_t>(va), {i, pv}) && isBjl(b, bb)) valsParam = va, bParam = bb;
  }
  if (valsParam < 0) return no("an entry's term is not value * B[column, l]");
  int mParam = -1;
  for (size_t q = 0; q < p.size(); ++q)
    if (p[q].abi.role == Role::Nat && static_cast<int>(q) != nParam && static_cast<int>(q) != kParam) mParam = static_cast<int>(q);
  const Scalar elem = p[outParam].abi.elem;
  auto is = [&](int q, Role role, const char *ctype) { return q >= 0 && p[q].abi.role == role && (!ctype || p[q].abi.ctype == ctype); };
  const bool types = (elem == Scalar::F32 || elem == Scalar::F64) && is(mParam, Role::Nat, nullptr) &&
                     (is(offsParam, Role::Buffer, "const int32_t *") || is(offsParam, Role::Nats, "const int32_t *")) &&
                     is(colsParam, Role::Buffer, "const int32_t *") && p[colsParam].abi.isIndex && is(valsParam, Role::Buffer, nullptr) &&
                     is(bParam, Role::Buffer, nullptr) && is(outParam, Role::OutBuffer, nullptr) && p[valsParam].abi.elem == elem &&
                     p[bParam].abi.elem == elem;
  CsrSpmm r;
  r.elem = elem;
  r.paramOf = {nParam, mParam, kParam, offsParam, valsParam, colsParam, bParam, outParam};
  std::array<int, 8> sorted = r.paramOf;
  std::sort(sorted.begin(), sorted.end());
  if (!types || std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    return no("its C parameters are not those of a CSR SpMM: n, m and k (nats), offs (i32), cols (32-bit indices), and vals, "
              "B and the result all three f32 or all three f64");
  return r;
}

}  // namespace spl::cin
