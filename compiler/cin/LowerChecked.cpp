/// \file LowerChecked.cpp: --checked, the validation a kernel runs before anything else.
/// Takes the kernel's parameters bound to their tensors and nat variables (Lower.cpp), and the
/// types of the input tensors; emits CIN that returns SPL_ERR_BAD_INPUT (a `fail 1`) on the
/// first input that does not have its type:
///   1. every nat parameter and every Count parameter (the element count of a data-dependent
///      input's buffers, tir/Abi.h) is >= 0;
///   2. for each input with a Count: each length its type gives (offs@(i+1) - offs@i,
///      toNat(lens@i)) is >= 0 and the elements they add up to fit in the count. The sum is
///      accumulated level by level and compared with what remains of the count before each
///      addition, so it cannot overflow; a pair of offsets must not decrease and their difference
///      must fit in 64 bits (64-bit offsets near INT64_MIN and INT64_MAX). Rows that are offsets
///      segments (CSR, SELL) add up to T@n - T@0: they are checked in parallel, the sum once;
///   3. every other length that is not obviously non-negative is >= 0, and every stored
///      idx[m] lies in [0, m).
/// Steps 1 and 2 read only arrays whose lengths follow from nat parameters (the offsets, n + 1
/// entries), so after them every read of step 3 and of the kernel lies inside the caller's
/// buffers. What remains assumed is documented in docs/c-abi.md: buffers hold what the nat
/// parameters and the counts say.
#include <cstdint>
#include <set>
#include <utility>

#include "cin/Layout.h"
#include "cin/LowerCommon.h"
#include "support/Error.h"

namespace spl::cin {
namespace lower {

namespace {

/// A length that no input can make negative: a polynomial with non-negative coefficients in
/// variables (nat parameters, checked first, and loop indices, which count up from 0).
bool obviouslyNonNegative(const Nat &n) {
  for (const Nat::Term &t : n.terms()) {
    if (t.coeff < Rat(0)) return false;
    for (const auto &f : t.mono.factors)
      if (f.first->kind != NatAtomKind::Var) return false;
  }
  return true;
}

/// Every array length inside t (at any depth) is obviously non-negative.
bool lengthsObviouslyNonNegative(const TypeP &t) {
  if (t->kind == TypeKind::Array && !obviouslyNonNegative(t->len)) return false;
  if (t->kind != TypeKind::Array && t->kind != TypeKind::Tuple) return true;
  for (const TypeP &e : t->elems)
    if (!lengthsObviouslyNonNegative(e)) return false;
  return true;
}

class InputValidator {
 public:
  explicit InputValidator(Lowerer &l) : l_(l) {}

  void run(const std::vector<KernelParam> &params) {
    for (const KernelParam &p : params)
      if ((p.abi.role == tir::AbiParam::Nat || p.abi.role == tir::AbiParam::Count) && p.natVar)
        fail(lt(param(p), constInt(0)));
    // Counts first (in parameter order: a type reads only earlier parameters), then the walks.
    std::set<int64_t> counted;
    for (const KernelParam &p : params) {
      if (p.abi.role != tir::AbiParam::Count) continue;
      const TensorP &t = p.tensor;
      if (!t) throw InternalError("--checked: count parameter '" + p.abi.name + "' has no tensor");
      counted.insert(t->id);
      std::vector<int> path = p.abi.path;
      if (path.empty()) path = leavesOf(t->type).at(0).path;  // all buffers hold as many
      int64_t need = l_.newLocal("need", Scalar::I64, constInt(0));
      addCount(t->type, path, 0, need, param(p));
    }
    std::set<int64_t> walked;
    for (const KernelParam &p : params) {
      const TensorP &t = p.tensor;
      if (!t || t->kind != Tensor::Input || !walked.insert(t->id).second) continue;
      walk(t, t->type, {}, {}, counted.count(t->id) > 0);
    }
  }

 private:
  Lowerer &l_;
  /// Lengths checked outside every loop (a check inside a loop may run zero times).
  std::set<std::string> checkedLengths_;
  /// Offsets arrays whose rows (T@(i+1) - T@i over i < len) were checked, as "T:len".
  std::set<std::string> checkedRows_;
  int loopDepth_ = 0;

  static ExprP lt(ExprP a, ExprP b) { return binary(ast::BinOp::Lt, std::move(a), std::move(b), Scalar::Bool); }
  static ExprP gt(ExprP a, ExprP b) { return binary(ast::BinOp::Gt, std::move(a), std::move(b), Scalar::Bool); }
  static ExprP sub(ExprP a, ExprP b) { return binary(ast::BinOp::Sub, std::move(a), std::move(b), Scalar::I64); }
  static ExprP param(const KernelParam &p) { return natExpr(Nat::var(NatVarId{p.natVar, p.abi.name})); }
  void fail(ExprP bad) { l_.emit(ifThen(std::move(bad), failWith(1 /* SPL_ERR_BAD_INPUT */))); }

  /// Fails when a length is negative; each length once, none that cannot be.
  void checkLength(const Nat &len) {
    if (len.asConst() || obviouslyNonNegative(len) || checkedLengths_.count(len.key())) return;
    if (loopDepth_ == 0) checkedLengths_.insert(len.key());
    if (auto pair = offsetsPair(len)) {
      // Offsets that decrease, or whose difference does not fit in 64 bits (64-bit offsets may
      // lie anywhere in their range): hi - lo > INT64_MAX, tested as lo < 0 && hi > INT64_MAX + lo
      // so that nothing overflows (the compiler may assume a subtraction does not).
      auto [hi, lo] = *pair;
      fail(binary(ast::BinOp::Or, lt(hi, lo), differenceOverflows(hi, lo), Scalar::Bool));
      return;
    }
    fail(lt(natExpr(len), constInt(0)));
  }

  /// The two offsets (T@(p+1), T@p) whose difference a length is, when it is an offsets segment.
  static std::optional<std::pair<ExprP, ExprP>> offsetsPair(const Nat &len) {
    std::optional<SegmentLevel> seg = segmentOfExtent(Nat(0), len);
    if (!seg || seg->lengths) return std::nullopt;
    return std::make_pair(natExpr(Nat::lookup(seg->array, seg->parent + Nat(1))), natExpr(Nat::lookup(seg->array, seg->parent)));
  }

  /// hi - lo > INT64_MAX for hi >= lo, without computing it: lo < 0 && hi > INT64_MAX + lo.
  static ExprP differenceOverflows(const ExprP &hi, const ExprP &lo) {
    return binary(ast::BinOp::And, lt(lo, constInt(0)),
                  gt(hi, binary(ast::BinOp::Add, constInt(INT64_MAX), lo, Scalar::I64)), Scalar::Bool);
  }

  /// The common case of addCount: an array of rows, row i an offsets segment T@(i+1) - T@i of
  /// elements of a static size (CSR, SELL's slots). Its rows add up to T@len - T@0 entries, so
  /// the rows are checked in parallel and the total once, with no serial pass over the rows.
  bool addTelescopingRows(const TypeP &ty, const std::vector<int> &path, size_t pi, int64_t need, const ExprP &cap) {
    TypeP row = ty->elems[0];
    size_t pj = pi;
    while (row->kind == TypeKind::Tuple) row = row->elems.at(path.at(pj++));
    if (row->kind != TypeKind::Array) return false;
    std::optional<SegmentLevel> seg = segmentOfExtent(Nat(0), row->len);
    if (!seg || seg->lengths || seg->parent != Nat::var(ty->binder)) return false;
    Nat each(1);
    if (!row->packed) {
      TypeP elem = row->elems[0];
      size_t pk = pj;
      while (elem->kind == TypeKind::Tuple) elem = elem->elems.at(path.at(pk++));
      if (elem->kind == TypeKind::Array) {
        each = leafCount(row->elems[0], std::vector<int>(path.begin() + static_cast<std::ptrdiff_t>(pj), path.end()));
        if (each.mentions(ty->binder.id) || each.mentions(row->binder.id) || each.readsData() ||
            !lengthsObviouslyNonNegative(row->elems[0]))
          return false;
      }
    }
    // cols and vals of one CSR share their rows: checked once (outside loops, which may not run).
    if (loopDepth_ > 0 || checkedRows_.insert(std::to_string(seg->array.id) + ":" + ty->len.key()).second)
      l_.loop("rows", Nat(0), ty->len, ForallKind::Parallel, [&](const Nat &i) {
        ++loopDepth_;
        TypeP r = types::elementAt(*ty, i);
        for (size_t q = pi; r->kind == TypeKind::Tuple;) r = r->elems.at(path.at(q++));
        checkLength(r->len);
        --loopDepth_;
      });
    ExprP hi = natExpr(Nat::lookup(seg->array, ty->len)), lo = natExpr(Nat::lookup(seg->array, Nat(0)));
    fail(differenceOverflows(hi, lo));
    addScaledValue(sub(hi, lo), each, need, cap);
    return true;
  }

  /// Adds to local `need` the number of elements of leaf `path` in a value of type ty (path[pi..]
  /// still to consume), failing as soon as the total would pass `cap`.
  void addCount(const TypeP &ty0, const std::vector<int> &path, size_t pi, int64_t need, const ExprP &cap) {
    TypeP ty = ty0;
    while (ty->kind == TypeKind::Tuple) ty = ty->elems.at(path.at(pi++));
    if (ty->kind != TypeKind::Array) {
      addScaled(Nat(1), Nat(1), need, cap);
      return;
    }
    checkLength(ty->len);
    TypeP elem = ty->elems[0];
    size_t pj = pi;
    // A packed level is one leaf: its tuples are its elements.
    while (!ty->packed && elem->kind == TypeKind::Tuple) elem = elem->elems.at(path.at(pj++));
    if (ty->packed || elem->kind != TypeKind::Array) {
      addScaled(ty->len, Nat(1), need, cap);
      return;
    }
    if (addTelescopingRows(ty, path, pi, need, cap)) return;
    std::vector<int> rest(path.begin() + static_cast<std::ptrdiff_t>(pi), path.end());
    Nat inner = leafCount(ty->elems[0], rest);
    if (!inner.mentions(ty->binder.id) && !inner.readsData() && lengthsObviouslyNonNegative(ty->elems[0])) {
      addScaled(ty->len, inner, need, cap);
      return;
    }
    l_.loop("count", Nat(0), ty->len, ForallKind::Serial, [&](const Nat &i) {
      ++loopDepth_;
      addCount(types::elementAt(*ty, i), path, pi, need, cap);
      --loopDepth_;
    });
  }

  /// need += len * each, failing first when that would pass cap (need <= cap holds throughout).
  void addScaled(const Nat &len, const Nat &each, int64_t need, const ExprP &cap) {
    addScaledValue(lengthValue(len), each, need, cap);
  }
  void addScaledValue(ExprP n, const Nat &each, int64_t need, const ExprP &cap) {
    if (each.isZero()) return;
    ExprP room = sub(cap, local(need, Scalar::I64));
    if (each == Nat(1)) {
      fail(gt(n, room));
    } else {
      // each may be 0 at run time (a nat parameter): then nothing is added and nothing divided.
      ExprP over = gt(n, binary(ast::BinOp::Div, room, natExpr(each), Scalar::I64));
      if (!each.asConst()) over = binary(ast::BinOp::And, gt(natExpr(each), constInt(0)), over, Scalar::Bool);
      fail(over);
    }
    if (each != Nat(1)) n = binary(ast::BinOp::Mul, n, natExpr(each), Scalar::I64);
    l_.emit(setLocal(need, binary(ast::BinOp::Add, local(need, Scalar::I64), n, Scalar::I64), Scalar::I64));
  }

  /// The value of a length checked by checkLength. An offsets segment's is hi - lo as one
  /// subtraction (a nat's form, hi + -1 * lo, would overflow for lo = INT64_MIN).
  static ExprP lengthValue(const Nat &len) {
    auto pair = offsetsPair(len);
    return pair ? sub(pair->first, pair->second) : natExpr(len);
  }

  /// Checks the lengths (unless `counted` did) and the stored idx values of tensor t, reading
  /// each element once, in order, only where its type says elements exist.
  void walk(const TensorP &t, const TypeP &ty, const std::vector<Nat> &idx, const std::vector<int> &leaf, bool counted) {
    switch (ty->kind) {
      case TypeKind::Idx: {
        ExprP v = access(t, idx, leaf, Scalar::I64);
        fail(binary(ast::BinOp::Or, lt(v, constInt(0)), binary(ast::BinOp::Ge, v, natExpr(ty->len), Scalar::Bool),
                    Scalar::Bool));
        return;
      }
      case TypeKind::Tuple:
        for (size_t k = 0; k < ty->elems.size(); ++k) {
          auto l = leaf;
          l.push_back(static_cast<int>(k));
          walk(t, ty->elems[k], idx, l, counted);
        }
        return;
      case TypeKind::Array: {
        if (!counted) checkLength(ty->len);
        if (!needsWalk(ty->elems[0], counted)) return;
        l_.loop("chk", Nat(0), ty->len, ForallKind::Parallel, [&](const Nat &i) {
          auto i2 = idx;
          i2.push_back(i);
          ++loopDepth_;
          walk(t, types::elementAt(*ty, i), i2, leaf, counted);
          --loopDepth_;
        });
        return;
      }
      default: return;
    }
  }

  /// Does anything below need checking: an idx value, or (uncounted) a length?
  static bool needsWalk(const TypeP &x, bool counted) {
    if (x->kind == TypeKind::Idx) return true;
    if (x->kind == TypeKind::Array && !counted && !obviouslyNonNegative(x->len)) return true;
    for (const TypeP &e : x->elems)
      if (needsWalk(e, counted)) return true;
    return false;
  }
};

}  // namespace

void Lowerer::validateInputs(const std::vector<KernelParam> &params) { InputValidator(*this).run(params); }

}  // namespace lower
}  // namespace spl::cin
