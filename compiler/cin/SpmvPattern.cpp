/// \file SpmvPattern.cpp: a CSR SpMV recognised in a kernel (see the header).
/// The shape matched is what the lowering makes of a row-wise map of a reduce(+, 0) over the
/// row's (column, value) pairs with body value * x@column (either order of the factors, the
/// accumulator on either side of +):
///   forall i in [0, n) { local acc = 0; forall k in segment(offs @ i) { local j = cols[i, k];
///   acc = acc + vals[i, k] * x[j] }; out[i] = acc }
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

}  // namespace

std::optional<CsrSpmv> recogniseCsrSpmv(const Kernel &k, std::string &whyNot) {
  auto no = [&](std::string why) -> std::optional<CsrSpmv> {
    whyNot = std::move(why);
    return std::nullopt;
  };
  if (k.cuda) return no("it is a cuda kernel (plans are for the CPU)");
  const std::vector<KernelParam> &p = k.params;
  using Role = tir::AbiParam::Role;
  if (std::any_of(p.begin(), p.end(), [](const KernelParam &q) { return q.abi.role == Role::Count; }))
    return no("under --checked its C function takes element counts, and a plan's kernels take none (plans run unchecked)");
  if (p.size() != 7)
    return no(fmt::format("its C function takes {} parameters, where a CSR SpMV takes 7 (n, m, offs, cols, vals, x, out)", p.size()));
  const Scalar elem = p[6].abi.elem;
  bool shapeOk = p[0].abi.role == Role::Nat && p[1].abi.role == Role::Nat &&
                 (p[2].abi.role == Role::Buffer || p[2].abi.role == Role::Nats) && p[2].abi.ctype == "const int32_t *" &&
                 p[3].abi.role == Role::Buffer && p[3].abi.isIndex && p[3].abi.ctype == "const int32_t *" &&
                 p[4].abi.role == Role::Buffer && p[5].abi.role == Role::Buffer && p[6].abi.role == Role::OutBuffer &&
                 (elem == Scalar::F32 || elem == Scalar::F64) && p[4].abi.elem == elem && p[5].abi.elem == elem;
  if (!shapeOk)
    return no("its C parameters are not those of a CSR SpMV: n, m (nats), offs (i32), cols (32-bit indices), vals, x and "
              "the result, all three f32 or all three f64, in that order");

  // forall i in [0, n)
  std::vector<const Stmt *> top = flat(k.body);
  if (top.size() != 1 || top[0]->kind != StmtKind::Forall) return no("its body is not one loop over the rows");
  const Stmt &rows = *top[0];
  if (!rows.lo.isZero() || !isLoopVar(rows.hi, p[0].natVar)) return no("its outer loop does not run over the n rows");
  const int64_t i = rows.var;

  // local acc = 0; forall k in segment(offs @ i) { ... }; out[i] = acc
  std::vector<const Stmt *> row = flat(rows.body.empty() ? nullptr : rows.body[0]);
  if (row.size() != 3 || row[0]->kind != StmtKind::DeclLocal || row[1]->kind != StmtKind::Forall ||
      row[2]->kind != StmtKind::Assign)
    return no("a row is not one sum over its entries written to the result");
  const int64_t acc = row[0]->local;
  if (row[0]->type != elem || !isZero(row[0]->value)) return no("a row's sum does not start at 0");
  const Stmt &entries = *row[1];
  bool rowSegment = entries.segment && entries.segment->whole && !entries.segment->lengths &&
                    p[2].tensor && entries.segment->array.id == p[2].tensor->id && isLoopVar(entries.segment->parent, i);
  if (!rowSegment) return no("the inner loop does not run over row i's entries (offs@i to offs@(i+1))");
  if (entries.forall != ForallKind::Reduction && entries.forall != ForallKind::Vector)
    return no("the row's sum is a fold, not a reduce (its order of additions is part of the result)");
  const Stmt &store = *row[2];
  if (store.compound || !accessAtLoops(store.lhs, k, 6, {i}) || !isLocal(store.value, acc))
    return no("a row's sum is not written to out[i]");

  // local j = cols[i, k]; acc = acc + vals[i, k] * x[j]
  std::vector<const Stmt *> body = flat(entries.body.empty() ? nullptr : entries.body[0]);
  if (body.size() != 2 || body[0]->kind != StmtKind::DeclLocal || body[1]->kind != StmtKind::SetLocal)
    return no("an entry's term is not value * x[column]");
  const int64_t kv = entries.var, j = body[0]->local;
  if (!accessAtLoops(body[0]->value, k, 3, {i, kv})) return no("an entry's column is not cols[i, k]");
  const Stmt &add = *body[1];
  const ExprP &sum = add.value;
  if (add.local != acc || !sum || sum->kind != ExprKind::Binary || sum->binop != ast::BinOp::Add)
    return no("the row's terms are not added up");
  ExprP term = isLocal(sum->args[0], acc) ? sum->args[1] : isLocal(sum->args[1], acc) ? sum->args[0] : nullptr;
  if (!term || term->kind != ExprKind::Binary || term->binop != ast::BinOp::Mul)
    return no("an entry's term is not value * x[column]");
  bool product = (accessAtLoops(term->args[0], k, 4, {i, kv}) && accessAtLocal(term->args[1], k, 5, j)) ||
                 (accessAtLoops(term->args[1], k, 4, {i, kv}) && accessAtLocal(term->args[0], k, 5, j));
  if (!product) return no("an entry's term is not value * x[column]");
  return CsrSpmv{elem};
}

}  // namespace spl::cin
