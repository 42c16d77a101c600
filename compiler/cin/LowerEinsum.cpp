/// \file LowerEinsum.cpp: index notation -> concrete index notation (LANGUAGE.md section 6).
///
/// Concretization. The right side is expanded into a sum of monomials (coefficient times a
/// product of accesses); an index absent from the output is summed over each monomial that
/// mentions it, which is taco's "smallest product term containing all its uses" once products
/// are distributed over sums. A dense result is zeroed and each monomial adds into it, so a sum
/// iterates the union of its terms' nonzeros; a product iterates its sparse factor's nonzeros
/// (the intersection with the dense factors, which are located).
///
/// Levels come from the operands' types through the level-format interface (LevelFormat.h):
/// each level iterates itself (dense by coordinate; compressed, padded and singleton levels by
/// position with their coordinates read from the idx components) and dense levels locate. This
/// file never asks which format a level has, only what it can do. A monomial's loop nest follows
/// its sparse factor's levels (storage order, so CSC and COO scatter), then dense loops for the
/// remaining indices. Sparse results are assembled through their levels' append functions.
/// When the output indices are bound by loops outside the summed ones, the sum accumulates in a
/// scalar and the output is written once per element (and, for a single monomial over full
/// dense loops, not zeroed first); that outer loop is parallel.
///
/// Sparse (CSR-shaped) results are assembled by one of three strategies: the pattern of the one
/// sparse factor (SDDMM), a row-by-row merge of two operands of the same shape (union for +/-,
/// intersection for *; count, then fill), or a transposition (count per output row, scan,
/// scatter). Other forms are reported as not supported yet.
#include <map>
#include <set>

#include "cin/LevelFormat.h"
#include "cin/Layout.h"
#include "cin/LowerCommon.h"
#include "support/Error.h"

namespace spl::cin {
namespace lower {

namespace {

/// One product term: coefficient times accesses (and opaque quotients).
struct Monomial {
  double coeff = 1;
  std::vector<const tir::EinsumTerm *> factors;
};

std::vector<Monomial> expand(const tir::EinsumTerm &t) {
  using Op = tir::EinsumTerm;
  switch (t.op) {
    case Op::Access: return {Monomial{1, {&t}}};
    case Op::Literal: return {Monomial{t.literal, {}}};
    case Op::Neg: {
      auto ms = expand(*t.kids[0]);
      for (Monomial &m : ms) m.coeff = -m.coeff;
      return ms;
    }
    case Op::Add:
    case Op::Sub: {
      auto a = expand(*t.kids[0]), b = expand(*t.kids[1]);
      for (Monomial &m : b) m.coeff = t.op == Op::Sub ? -m.coeff : m.coeff;
      a.insert(a.end(), b.begin(), b.end());
      return a;
    }
    case Op::Mul: {
      auto a = expand(*t.kids[0]), b = expand(*t.kids[1]);
      std::vector<Monomial> out;
      for (const Monomial &x : a)
        for (const Monomial &y : b) {
          Monomial m{x.coeff * y.coeff, x.factors};
          m.factors.insert(m.factors.end(), y.factors.begin(), y.factors.end());
          out.push_back(m);
        }
      return out;
    }
    case Op::Div: {
      auto b = expand(*t.kids[1]);
      if (b.size() == 1 && b[0].factors.empty() && b[0].coeff != 0) {
        auto a = expand(*t.kids[0]);
        for (Monomial &m : a) m.coeff /= b[0].coeff;
        return a;
      }
      throw NotSupported(t.loc, "einsum division by a tensor");
    }
  }
  return {};
}

/// Does the tensor have a level without random access (so it must drive the iteration)?
bool hasPositions(const TypeP &t) {
  for (const Level &l : levelsOf(t))
    if (!l.format->properties().hasLocate) return true;
  return false;
}

}  // namespace

/// The state of one einsum's lowering.
class EinsumLowering {
 public:
  EinsumLowering(Lowerer &l, const tir::Einsum &ein, const Env &env) : L(l), ein_(ein), env_(env) {
    for (const tir::EinsumIndexVar &ix : ein.indices) extents_.push_back(substitute(ix.extent, env.nats));
  }

  /// The data tensor (and its type) of an operand.
  struct Operand {
    TensorP tensor;
    TypeP type;
    NatVarId nats;  // a csr operand's offsets (Lookup array), when it is a pair
    bool isPair = false;
  };

  Operand operand(const tir::EinsumTerm &t) {
    auto it = operands_.find(t.tensor->id);
    if (it != operands_.end()) return it->second;
    auto v = env_.vals.find(t.tensor->id);
    if (v == env_.vals.end()) throw InternalError("einsum: unbound operand " + t.tensor->name);
    Operand o;
    ValP val = v->second;
    if (val->kind == Val::Pair) {
      o.isPair = true;
      o.nats = val->firstNats;
      val = val->second;
    }
    if (val->kind == Val::Scalar) {
      o.type = nullptr;  // a scalar operand
    } else {
      if (val->kind != Val::Array) throw InternalError("einsum: operand is not an array");
      if (!(val->tensor && val->prefix.empty() && val->leaf.empty())) val = L.materialize(val, "ein");
      o.tensor = val->tensor;
      o.type = val->type;
    }
    scalarOperands_[t.tensor->id] = v->second;
    operands_[t.tensor->id] = o;
    return o;
  }

  ExprP scalarOperand(const tir::EinsumTerm &t) { return scalarOperands_.at(t.tensor->id)->scalar; }

  Scalar scalar() const { return ein_.scalar; }
  ExprP zero() const { return isFloat(ein_.scalar) ? constFloat(0, ein_.scalar) : constInt(0, ein_.scalar); }
  ExprP coeffExpr(double c) const {
    return isFloat(ein_.scalar) ? constFloat(c, ein_.scalar) : constInt(static_cast<int64_t>(c), ein_.scalar);
  }

  // ---- dense results --------------------------------------------------------------------

  /// Writes the einsum into a dense tensor `out` of type `outType`.
  void intoDense(const TensorP &out) {
    std::vector<Monomial> monos = expand(*ein_.rhs);
    for (const Monomial &m : monos)
      for (const tir::EinsumTerm *f : m.factors) operand(*f);
    bool direct = monos.size() == 1 && directWrite(monos[0]);
    if (!direct) zeroDense(out);
    for (const Monomial &m : monos) emitMonomial(m, out, direct);
  }

  void zeroDense(const TensorP &out) {
    std::vector<Nat> idx;
    std::function<void(const TypeP &)> rec = [&](const TypeP &t) {
      if (t->kind != TypeKind::Array) {
        L.emit(assign(access(out, idx, {}, scalar()), zero()));
        return;
      }
      L.loop("z" + std::to_string(idx.size()), Nat(0), t->len, idx.empty() ? ForallKind::Parallel : ForallKind::Serial, [&](const Nat &i) {
        idx.push_back(i);
        rec(types::elementAt(*t, i));
        idx.pop_back();
      });
    };
    rec(out->type);
  }

  /// A plan step: walk one level of the driving sparse factor, or a dense loop for one index.
  struct Step {
    LevelFormatP driverLevel;  // a level of the driving factor, or null: a dense loop
    int index = -1;            // a dense loop: the einsum index it binds
  };

  const tir::EinsumTerm *driverOf(const Monomial &m) {
    const tir::EinsumTerm *driver = nullptr;
    for (const tir::EinsumTerm *f : m.factors) {
      Operand o = operand(*f);
      if (o.type && hasPositions(o.type)) {
        if (driver) throw NotSupported(f->loc, "einsum with a product of two sparse operands into a dense result");
        driver = f;
      }
    }
    return driver;
  }

  bool isOutput(int ix) const {
    return std::find(ein_.outIndices.begin(), ein_.outIndices.end(), ix) != ein_.outIndices.end();
  }

  /// The order in which a monomial's loops bind its indices: the driver's levels (each level
  /// binds its coordinates), then the remaining output indices, then the remaining summed ones.
  /// `bindsAt[k]` lists the indices bound by step k.
  void plan(const Monomial &m, const tir::EinsumTerm *driver, std::vector<Step> &steps,
            std::vector<std::vector<int>> &bindsAt, std::vector<bool> &denseBinding) {
    std::set<int> boundSet;
    if (driver) {
      Operand o = operand(*driver);
      size_t k = 0;
      for (const Level &level : levelsOf(o.type)) {
        Step s;
        s.driverLevel = level.format;
        std::vector<int> binds;
        for (int c = 0; c < level.format->coordinateCount(*level.type); ++c) {
          if (k >= driver->indices.size()) throw InternalError("einsum: more levels than indices in " + types::str(o.type));
          binds.push_back(driver->indices[k++]);
        }
        LevelProperties props = level.format->properties();
        denseBinding.push_back(props.full && props.hasLocate);
        for (int b : binds) boundSet.insert(b);
        steps.push_back(s);
        bindsAt.push_back(binds);
      }
    }
    std::vector<int> rest;
    for (int o : ein_.outIndices)
      if (!boundSet.count(o)) rest.push_back(o);
    for (const tir::EinsumTerm *f : m.factors)
      for (int ix : f->indices)
        if (!boundSet.count(ix) && !isOutput(ix) && std::find(rest.begin(), rest.end(), ix) == rest.end()) rest.push_back(ix);
    for (int ix : rest) {
      boundSet.insert(ix);
      Step s;
      s.index = ix;
      steps.push_back(s);
      bindsAt.push_back({ix});
      denseBinding.push_back(true);
    }
  }

  /// A single monomial can write each output element once when every output index is bound by
  /// a full dense loop before any summed index.
  bool directWrite(const Monomial &m) {
    const tir::EinsumTerm *driver = driverOf(m);
    std::vector<Step> steps;
    std::vector<std::vector<int>> bindsAt;
    std::vector<bool> dense;
    plan(m, driver, steps, bindsAt, dense);
    size_t outsLeft = ein_.outIndices.size();
    for (size_t k = 0; k < steps.size() && outsLeft > 0; ++k) {
      for (int b : bindsAt[k]) {
        if (!isOutput(b)) return false;
        if (!dense[k]) return false;
        --outsLeft;
      }
    }
    return outsLeft == 0;
  }

  void emitMonomial(const Monomial &m, const TensorP &out, bool direct) {
    const tir::EinsumTerm *driver = driverOf(m);
    std::vector<Step> steps;
    std::vector<std::vector<int>> bindsAt;
    std::vector<bool> dense;
    plan(m, driver, steps, bindsAt, dense);
    bound_.clear();
    DriverState ds;
    if (driver) {
      Operand o = operand(*driver);
      ds.type = o.type;
      ds.tensor = o.tensor;
    }
    run(m, driver, out, direct, steps, bindsAt, 0, ds, nullptr, 0);
  }

  /// Where the iteration of the driving factor stands.
  using DriverState = LevelPosition;

  bool outputsBound() const {
    for (int o : ein_.outIndices)
      if (!bound_.count(o)) return false;
    return true;
  }

  /// The value of a factor at the bound indices.
  ExprP factorValue(const tir::EinsumTerm &f, const tir::EinsumTerm *driver, const DriverState &ds) {
    Operand o = operand(f);
    if (!o.type) return convert(scalarOperand(f), scalar());
    if (&f == driver) return access(ds.tensor, ds.prefix, ds.leaf, scalar());
    // A dense operand: locate it at the bound coordinates.
    std::vector<Nat> idx;
    for (int ix : f.indices) {
      auto it = bound_.find(ix);
      if (it == bound_.end()) throw InternalError("einsum: index not bound when locating a dense operand");
      idx.push_back(it->second);
    }
    return access(o.tensor, idx, {}, scalar());
  }

  ExprP monomialValue(const Monomial &m, const tir::EinsumTerm *driver, const DriverState &ds) {
    ExprP v = m.coeff == 1 ? nullptr : coeffExpr(m.coeff);
    for (const tir::EinsumTerm *f : m.factors) {
      ExprP x = factorValue(*f, driver, ds);
      v = v ? binary(ast::BinOp::Mul, v, x, scalar()) : x;
    }
    return v ? v : coeffExpr(m.coeff);
  }

  std::vector<Nat> outIndexNats() const {
    std::vector<Nat> idx;
    for (int o : ein_.outIndices) idx.push_back(bound_.at(o));
    return idx;
  }

  /// Emits steps[k..]; `acc` is the accumulator local when the sum is being accumulated.
  void run(const Monomial &m, const tir::EinsumTerm *driver, const TensorP &out, bool direct,
           const std::vector<Step> &steps, const std::vector<std::vector<int>> &bindsAt, size_t k, DriverState ds,
           const int64_t *acc, int depth) {
    // Once the outputs are bound and summed indices remain, accumulate in a scalar.
    if (!acc && outputsBound() && k < steps.size()) {
      int64_t a = L.newLocal("acc", scalar(), zero());
      run(m, driver, out, direct, steps, bindsAt, k, ds, &a, depth);
      ExprP target = access(out, outIndexNats(), {}, scalar());
      ExprP sum = local(a, scalar());
      L.emit(assign(target, direct ? sum : binary(ast::BinOp::Add, target, sum, scalar())));
      return;
    }
    if (k == steps.size()) {
      ExprP v = monomialValue(m, driver, ds);
      if (acc) {
        ExprP cur = local(*acc, scalar());
        auto add = std::make_shared<Expr>(*binary(ast::BinOp::Add, cur, v, scalar()));
        add->reassoc = true;
        L.emit(setLocal(*acc, add, scalar()));
      } else {
        ExprP target = access(out, outIndexNats(), {}, scalar());
        L.emit(assign(target, direct ? v : binary(ast::BinOp::Add, target, v, scalar())));
      }
      return;
    }
    const Step &s = steps[k];
    // The outermost loop may run in parallel when it binds an output index and every
    // iteration writes its own output elements.
    auto kindFor = [&](bool bindsOutput) {
      if (acc) return ForallKind::Reduction;
      if (depth == 0 && bindsOutput && writesDisjoint(steps, bindsAt)) return ForallKind::Parallel;
      return ForallKind::Serial;
    };
    if (!s.driverLevel) {
      int ix = s.index;
      L.loop(ein_.indexNames[ix], Nat(0), extents_[ix], kindFor(isOutput(ix)), [&](const Nat &c) {
        bound_[ix] = c;
        run(m, driver, out, direct, steps, bindsAt, k + 1, ds, acc, depth + 1);
        bound_.erase(ix);
      });
      return;
    }
    // A level of the driving factor: located when its coordinates are bound already (and it
    // can locate), otherwise iterated. A level without locate that binds an output index
    // scatters, so its loop runs in order.
    const LevelFormat &format = *s.driverLevel;
    LevelProperties props = format.properties();
    const std::vector<int> &binds = bindsAt[k];
    auto descend = [&](const LevelPosition &child) { run(m, driver, out, direct, steps, bindsAt, k + 1, child, acc, depth + 1); };
    bool allBound = true, outs = false;
    for (int b : binds) {
      allBound = allBound && bound_.count(b);
      outs = outs || isOutput(b);
    }
    if (props.hasLocate && allBound) {
      std::vector<Nat> coords;
      for (int b : binds) coords.push_back(bound_[b]);
      descend(format.locate(ds, coords));
      return;
    }
    ForallKind kind = props.hasLocate ? kindFor(outs) : (outs ? ForallKind::Serial : kindFor(false));
    std::string name = props.hasLocate && binds.size() == 1 ? ein_.indexNames[binds[0]] : "p";
    format.iterate(L, ds, name, kind, [&](const LevelPosition &child, const std::vector<Nat> &coords) {
      for (size_t c = 0; c < binds.size(); ++c) bound_[binds[c]] = coords.at(c);
      descend(child);
      for (int b : binds) bound_.erase(b);
    });
  }

  /// Every iteration of the first loop writes different output elements: it binds an output
  /// index with a dense loop, as do all steps up to the last output binding.
  bool writesDisjoint(const std::vector<Step> &steps, const std::vector<std::vector<int>> &bindsAt) const {
    if (steps.empty() || bindsAt[0].size() != 1 || !isOutput(bindsAt[0][0])) return false;
    (void)steps;
    return true;
  }

  // ---- sparse (CSR-shaped) results ------------------------------------------------------

  /// Writes a sparse result. `outNats` is the output offsets tensor (null in the size function),
  /// `sizes` receives {rows + 1, nnz, nnz} in the size function.
  ValP intoSparse(const TypeP &rt, const std::function<TensorP(const TypeP &dataType)> &makeData,
                  const TensorP &outNats, const TensorP &sizes) {
    std::vector<Monomial> monos = expand(*ein_.rhs);
    for (const Monomial &mo : monos)
      for (const tir::EinsumTerm *f : mo.factors) operand(*f);
    if (rt->kind != TypeKind::DepPair || !rt->pairOverNats)
      throw NotSupported(ein_.rhs->loc, "einsum into a sparse result that is not a csr-like pair");
    const std::vector<int> &out = ein_.outIndices;
    // Sparse factors of each monomial.
    std::vector<const tir::EinsumTerm *> sparse;
    for (const Monomial &mo : monos)
      for (const tir::EinsumTerm *f : mo.factors)
        if (operand(*f).type && hasPositions(operand(*f).type)) sparse.push_back(f);
    auto sameOrder = [&](const tir::EinsumTerm *f) { return f->indices == out; };
    // Rows (a full level that locates) over an ordered level of unique single coordinates:
    // the shape that rows can be merged, copied and transposed in.
    auto isCsr = [&](const tir::EinsumTerm *f) {
      Operand o = operand(*f);
      if (!o.isPair) return false;
      std::vector<Level> ls = levelsOf(o.type);
      if (ls.size() < 2) return false;
      LevelProperties rows = ls[0].format->properties(), entries = ls[1].format->properties();
      return rows.full && rows.hasLocate && !entries.hasLocate && entries.ordered && entries.unique &&
             ls[1].format->coordinateCount(*ls[1].type) == 1;
    };
    // 1. The pattern of the one sparse factor of a single product (SDDMM).
    if (monos.size() == 1 && sparse.size() == 1 && sameOrder(sparse[0]) && isCsr(sparse[0]))
      return patternCopy(rt, monos[0], sparse[0], makeData, outNats, sizes);
    // 2. A transposition of one operand.
    if (monos.size() == 1 && sparse.size() == 1 && monos[0].factors.size() == 1 && isCsr(sparse[0]) && out.size() == 2 &&
        sparse[0]->indices.size() == 2 && sparse[0]->indices[0] == out[1] && sparse[0]->indices[1] == out[0])
      return transposeScatter(rt, monos[0], sparse[0], makeData, outNats, sizes);
    // 3. A row merge of operands of the same shape: union of a sum, intersection of a product.
    bool allCsr = !sparse.empty();
    for (const tir::EinsumTerm *f : sparse) allCsr = allCsr && isCsr(f) && sameOrder(f);
    if (allCsr) return rowMerge(rt, monos, makeData, outNats, sizes);
    throw NotSupported(ein_.rhs->loc, "this einsum into a sparse result (supported: the pattern of one sparse factor, "
                                      "a transposition, and sums or products of operands of the same csr shape)");
  }

  /// The assembled level of a csr-shaped result (below its rows), and its entry at (row, q).
  static const LevelFormat &resultLevel(const TypeP &type) {
    std::vector<Level> ls = levelsOf(type);
    if (ls.size() < 2) throw InternalError("einsum: a sparse result without a level below its rows");
    return *ls[1].format;
  }
  static LevelPosition resultEntry(const TensorP &data, const Nat &row, const Nat &q) {
    TypeP rowType = types::elementAt(*data->type, row);
    return LevelPosition{data, types::elementAt(*rowType, q), {row, q}, {}};
  }

  ValP pairResult(const NatVarId &nats, const TensorP &data) {
    auto p = std::make_shared<Val>();
    p->kind = Val::Pair;
    p->overNats = true;
    p->firstNats = nats;
    p->second = data ? L.tensorView(data, data->type, {}, {}) : nullptr;
    return p;
  }

  ValP patternCopy(const TypeP &rt, const Monomial &m, const tir::EinsumTerm *s, const std::function<TensorP(const TypeP &)> &makeData,
                   const TensorP &outNats, const TensorP &sizes) {
    Operand so = operand(*s);
    NatSubst sub;
    sub.arrays.emplace(rt->binder.id, so.nats);
    TypeP dataType = types::substitute(rt->elems[0], sub);
    if (sizes) {
      writeSizes(sizes, natsCount(rt->elems[0], rt->binder.id), leafCount(dataType, {1}));
      return pairResult(so.nats, nullptr);
    }
    copyNats(outNats, so.nats, natsCount(rt->elems[0], rt->binder.id));
    TensorP data = makeData(dataType);
    // Values at S's positions; columns copied.
    int rowIx = s->indices[0], colIx = s->indices[1];
    L.loop(ein_.indexNames[rowIx], Nat(0), so.type->len, ForallKind::Parallel, [&](const Nat &i) {
      bound_[rowIx] = i;
      TypeP row = types::elementAt(*so.type, i);
      L.loop("p", Nat(0), row->len, ForallKind::Serial, [&](const Nat &p) {
        Nat col = L.natOf(L.scalarVal(access(so.tensor, {i, p}, {1}, Scalar::I64)));
        bound_[colIx] = col;
        resultLevel(data->type).appendCoordinates(L, resultEntry(data, i, p), {natExpr(col)});
        DriverState ds;
        ds.tensor = so.tensor;
        ds.type = types::elementAt(*row, p)->elems[0];
        ds.prefix = {i, p};
        ds.leaf = {0};
        // Remaining (summed) indices: dense loops accumulating in a scalar.
        std::vector<int> rest;
        for (const tir::EinsumTerm *f : m.factors)
          for (int ix : f->indices)
            if (!bound_.count(ix) && std::find(rest.begin(), rest.end(), ix) == rest.end()) rest.push_back(ix);
        int64_t a = L.newLocal("acc", scalar(), zero());
        std::function<void(size_t)> inner = [&](size_t r) {
          if (r == rest.size()) {
            auto add = std::make_shared<Expr>(*binary(ast::BinOp::Add, local(a, scalar()), monomialValue(m, s, ds), scalar()));
            add->reassoc = true;
            L.emit(setLocal(a, add, scalar()));
            return;
          }
          L.loop(ein_.indexNames[rest[r]], Nat(0), extents_[rest[r]], ForallKind::Reduction, [&](const Nat &c) {
            bound_[rest[r]] = c;
            inner(r + 1);
            bound_.erase(rest[r]);
          });
        };
        inner(0);
        L.emit(assign(access(data, {i, p}, {0}, scalar()), local(a, scalar())));
        bound_.erase(colIx);
      });
      bound_.erase(rowIx);
    });
    return pairResult(so.nats, data);
  }

  /// The result's offsets from the input's whose pattern it takes, rebased to start at 0 (an
  /// assembled pos array starts at 0, LANGUAGE.md 6; an input's may start anywhere).
  void copyNats(const TensorP &outNats, const NatVarId &src, const Nat &count) {
    L.loop("j", Nat(0), count, ForallKind::Parallel, [&](const Nat &j) {
      L.emit(assign(access(outNats, {j}, {}, Scalar::I64), natExpr(Nat::lookup(src, j) - Nat::lookup(src, Nat(0)))));
    });
  }

  void writeSizes(const TensorP &sizes, const Nat &rowsPlusOne, const Nat &nnz) {
    L.emit(assign(access(sizes, {Nat(0)}, {}, Scalar::I64), natExpr(rowsPlusOne)));
    L.emit(assign(access(sizes, {Nat(1)}, {}, Scalar::I64), natExpr(nnz)));
    L.emit(assign(access(sizes, {Nat(2)}, {}, Scalar::I64), natExpr(nnz)));
  }

  /// B[j, i] = A[i, j]: count the entries of each column, scan into the offsets, scatter.
  ValP transposeScatter(const TypeP &rt, const Monomial &m, const tir::EinsumTerm *a, const std::function<TensorP(const TypeP &)> &makeData,
                        const TensorP &outNats, const TensorP &sizes) {
    Operand ao = operand(*a);
    Nat rows = ao.type->len;                     // n: rows of A
    Nat cols = extents_[ein_.outIndices[0]];     // m: rows of B
    Nat nnz = Nat::lookup(ao.nats, rows) - Nat::lookup(ao.nats, Nat(0));
    if (sizes) {
      writeSizes(sizes, cols + Nat(1), nnz);
      return pairResult(ao.nats, nullptr);
    }
    // Histogram into outNats[j + 1], then an in-place exclusive scan.
    L.loop("j", Nat(0), cols + Nat(1), ForallKind::Parallel, [&](const Nat &j) {
      L.emit(assign(access(outNats, {j}, {}, Scalar::I64), constInt(0)));
    });
    auto forEachEntry = [&](const std::function<void(const Nat &i, const Nat &p, const Nat &j)> &body) {
      L.loop("i", Nat(0), rows, ForallKind::Serial, [&](const Nat &i) {
        TypeP row = types::elementAt(*ao.type, i);
        L.loop("p", Nat(0), row->len, ForallKind::Serial, [&](const Nat &p) {
          Nat j = L.natOf(L.scalarVal(access(ao.tensor, {i, p}, {1}, Scalar::I64)));
          body(i, p, j);
        });
      });
    };
    forEachEntry([&](const Nat &, const Nat &, const Nat &j) {
      ExprP slot = access(outNats, {j + Nat(1)}, {}, Scalar::I64);
      L.emit(assign(slot, binary(ast::BinOp::Add, slot, constInt(1), Scalar::I64)));
    });
    L.loop("j", Nat(0), cols, ForallKind::Serial, [&](const Nat &j) {
      ExprP next = access(outNats, {j + Nat(1)}, {}, Scalar::I64);
      L.emit(assign(next, binary(ast::BinOp::Add, next, access(outNats, {j}, {}, Scalar::I64), Scalar::I64)));
    });
    NatSubst sub;
    sub.arrays.emplace(rt->binder.id, NatVarId{outNats->id, outNats->name});
    TensorP data = makeData(types::substitute(rt->elems[0], sub));
    // A cursor per output row, starting at its offset.
    TensorP cursor = L.newTemp("cursor", types::array(cols, types::scalar(ScalarKind::I64)));
    L.loop("j", Nat(0), cols, ForallKind::Parallel, [&](const Nat &j) {
      L.emit(assign(access(cursor, {j}, {}, Scalar::I64), access(outNats, {j}, {}, Scalar::I64)));
    });
    forEachEntry([&](const Nat &i, const Nat &p, const Nat &j) {
      ExprP cur = access(cursor, {j}, {}, Scalar::I64);
      int64_t q = L.newLocal("q", Scalar::I64, binary(ast::BinOp::Sub, cur, access(outNats, {j}, {}, Scalar::I64), Scalar::I64));
      Nat qn = Nat::value(NatVarId{q, "%" + std::to_string(q)});
      resultLevel(data->type).appendCoordinates(L, resultEntry(data, j, qn), {natExpr(i)});
      ExprP v = access(ao.tensor, {i, p}, {0}, scalar());
      if (m.coeff != 1) v = binary(ast::BinOp::Mul, coeffExpr(m.coeff), v, scalar());
      L.emit(assign(access(data, {j, qn}, {0}, scalar()), v));
      L.emit(assign(cur, binary(ast::BinOp::Add, cur, constInt(1), Scalar::I64)));
    });
    return pairResult(NatVarId{outNats->id, outNats->name}, data);
  }

  /// Union (a sum of single-factor monomials) or intersection (one product) of operands of the
  /// same csr shape, merged row by row with two pointers: a count pass gives the offsets, a fill
  /// pass writes columns ascending. The merge runs as a bounded loop of la + lb steps, each
  /// advancing at least one pointer while any remains.
  ValP rowMerge(const TypeP &rt, const std::vector<Monomial> &monos, const std::function<TensorP(const TypeP &)> &makeData,
                const TensorP &outNats, const TensorP &sizes) {
    bool intersection = monos.size() == 1;
    std::vector<const tir::EinsumTerm *> ops;
    std::vector<double> coeffs;
    if (intersection) {
      for (const tir::EinsumTerm *f : monos[0].factors)
        if (operand(*f).type && hasPositions(operand(*f).type)) ops.push_back(f);
      if (ops.size() != 2 || monos[0].factors.size() != 2)
        throw NotSupported(ein_.rhs->loc, "einsum products of more than two csr operands into a sparse result");
    } else {
      for (const Monomial &mo : monos) {
        if (mo.factors.size() != 1) throw NotSupported(ein_.rhs->loc, "einsum sums of products into a sparse result");
        ops.push_back(mo.factors[0]);
        coeffs.push_back(mo.coeff);
      }
      if (ops.size() != 2) throw NotSupported(ein_.rhs->loc, "einsum sums of more than two csr operands into a sparse result");
    }
    Operand A = operand(*ops[0]), B = operand(*ops[1]);
    Nat rows = A.type->len;
    // count(i) for every row, via the merge with a callback per produced entry.
    auto merge = [&](const Nat &i, const std::function<void(ExprP col, ExprP va, ExprP vb, ExprP hasA, ExprP hasB)> &emitEntry) {
      Nat la = types::elementAt(*A.type, i)->len, lb = types::elementAt(*B.type, i)->len;
      int64_t pa = L.newLocal("pa", Scalar::I64, constInt(0));
      int64_t pb = L.newLocal("pb", Scalar::I64, constInt(0));
      ExprP pae = local(pa, Scalar::I64), pbe = local(pb, Scalar::I64);
      ExprP laE = natExpr(la), lbE = natExpr(lb);
      Nat paN = Nat::value(NatVarId{pa, "%" + std::to_string(pa)}), pbN = Nat::value(NatVarId{pb, "%" + std::to_string(pb)});
      L.loop("t", Nat(0), la + lb, ForallKind::Serial, [&](const Nat &) {
        ExprP aLeft = binary(ast::BinOp::Lt, pae, laE, Scalar::Bool), bLeft = binary(ast::BinOp::Lt, pbe, lbE, Scalar::Bool);
        ExprP big = constInt(INT64_MAX);
        ExprP ja = select(aLeft, access(A.tensor, {i, paN}, {1}, Scalar::I64), big, Scalar::I64);
        ExprP jb = select(bLeft, access(B.tensor, {i, pbN}, {1}, Scalar::I64), big, Scalar::I64);
        int64_t jaL = L.newLocal("ja", Scalar::I64, ja), jbL = L.newLocal("jb", Scalar::I64, jb);
        ExprP jaE = local(jaL, Scalar::I64), jbE = local(jbL, Scalar::I64);
        ExprP j = minmax(false, jaE, jbE, Scalar::I64);
        int64_t jL = L.newLocal("j", Scalar::I64, j);
        ExprP jE = local(jL, Scalar::I64);
        ExprP isA = binary(ast::BinOp::Eq, jaE, jE, Scalar::Bool), isB = binary(ast::BinOp::Eq, jbE, jE, Scalar::Bool);
        ExprP any = binary(ast::BinOp::Lt, jE, big, Scalar::Bool);
        ExprP produce = intersection ? binary(ast::BinOp::And, isA, isB, Scalar::Bool) : any;
        L.pushBlock();
        ExprP va = select(isA, access(A.tensor, {i, paN}, {0}, scalar()), zero(), scalar());
        ExprP vb = select(isB, access(B.tensor, {i, pbN}, {0}, scalar()), zero(), scalar());
        emitEntry(jE, va, vb, isA, isB);
        StmtP body = L.popBlock();
        L.emit(ifThen(binary(ast::BinOp::And, any, produce, Scalar::Bool), body));
        // Advance: both on a match; otherwise the smaller (the only one in a union's tail).
        L.emit(ifThen(binary(ast::BinOp::And, any, isA, Scalar::Bool),
                      setLocal(pa, binary(ast::BinOp::Add, pae, constInt(1), Scalar::I64), Scalar::I64)));
        L.emit(ifThen(binary(ast::BinOp::And, any, isB, Scalar::Bool),
                      setLocal(pb, binary(ast::BinOp::Add, pbe, constInt(1), Scalar::I64), Scalar::I64)));
      });
    };
    if (sizes) {
      int64_t total = L.newLocal("nnz", Scalar::I64, constInt(0));
      L.loop("i", Nat(0), rows, ForallKind::Serial, [&](const Nat &i) {
        merge(i, [&](ExprP, ExprP, ExprP, ExprP, ExprP) {
          L.emit(setLocal(total, binary(ast::BinOp::Add, local(total, Scalar::I64), constInt(1), Scalar::I64), Scalar::I64));
        });
      });
      L.emit(assign(access(sizes, {Nat(0)}, {}, Scalar::I64), natExpr(rows + Nat(1))));
      L.emit(assign(access(sizes, {Nat(1)}, {}, Scalar::I64), local(total, Scalar::I64)));
      L.emit(assign(access(sizes, {Nat(2)}, {}, Scalar::I64), local(total, Scalar::I64)));
      return pairResult(A.nats, nullptr);
    }
    // Count pass: outNats[0] = 0, outNats[i + 1] = outNats[i] + count(i).
    L.emit(assign(access(outNats, {Nat(0)}, {}, Scalar::I64), constInt(0)));
    L.loop("i", Nat(0), rows, ForallKind::Serial, [&](const Nat &i) {
      int64_t c = L.newLocal("count", Scalar::I64, constInt(0));
      merge(i, [&](ExprP, ExprP, ExprP, ExprP, ExprP) {
        L.emit(setLocal(c, binary(ast::BinOp::Add, local(c, Scalar::I64), constInt(1), Scalar::I64), Scalar::I64));
      });
      resultLevel(rt).appendEdges(L, outNats, i, local(c, Scalar::I64));
    });
    NatSubst sub;
    sub.arrays.emplace(rt->binder.id, NatVarId{outNats->id, outNats->name});
    TensorP data = makeData(types::substitute(rt->elems[0], sub));
    // Fill pass, rows in parallel.
    L.loop("i", Nat(0), rows, ForallKind::Parallel, [&](const Nat &i) {
      int64_t q = L.newLocal("q", Scalar::I64, constInt(0));
      Nat qN = Nat::value(NatVarId{q, "%" + std::to_string(q)});
      merge(i, [&](ExprP col, ExprP va, ExprP vb, ExprP, ExprP) {
        ExprP v;
        if (intersection) {
          v = binary(ast::BinOp::Mul, va, vb, scalar());
          if (monos[0].coeff != 1) v = binary(ast::BinOp::Mul, coeffExpr(monos[0].coeff), v, scalar());
        } else {
          ExprP x = coeffs[0] == 1 ? va : binary(ast::BinOp::Mul, coeffExpr(coeffs[0]), va, scalar());
          ExprP y = coeffs[1] == 1 ? vb : binary(ast::BinOp::Mul, coeffExpr(coeffs[1]), vb, scalar());
          v = binary(ast::BinOp::Add, x, y, scalar());
        }
        resultLevel(data->type).appendCoordinates(L, resultEntry(data, i, qN), {col});
        L.emit(assign(access(data, {i, qN}, {0}, scalar()), v));
        L.emit(setLocal(q, binary(ast::BinOp::Add, local(q, Scalar::I64), constInt(1), Scalar::I64), Scalar::I64));
      });
    });
    return pairResult(NatVarId{outNats->id, outNats->name}, data);
  }

  Lowerer &L;
  const tir::Einsum &ein_;
  const Env &env_;
  std::vector<Nat> extents_;
  std::map<int64_t, Operand> operands_;
  std::map<int64_t, ValP> scalarOperands_;
  std::map<int, Nat> bound_;
};

ValP Lowerer::evalEinsum(const tir::Expr &e, const Env &env) {
  // An einsum inside an expression: computed into a temporary (dense results only).
  TypeP rt = kt(e.type, env);
  if (rt->kind == TypeKind::DepPair)
    throw NotSupported(e.loc, "a sparse einsum result inside an expression (make it the body of an exported def)");
  TensorP t = newTemp("einsum", rt);
  EinsumLowering el(*this, *e.einsum, env);
  el.intoDense(t);
  return tensorView(t, t->type, {}, {});
}

void Lowerer::einsumIntoOutputs(const tir::Expr &e, const Env &env, const TypeP &rt,
                                const std::function<TensorP(const TypeP &)> &makeData, const TensorP &outNats,
                                const TensorP &sizes) {
  EinsumLowering el(*this, *e.einsum, env);
  if (rt->kind == TypeKind::DepPair) {
    el.intoSparse(rt, makeData, outNats, sizes);
    return;
  }
  if (sizes) return;
  el.intoDense(makeData(rt));
}

}  // namespace lower
}  // namespace spl::cin
