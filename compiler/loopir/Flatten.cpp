/// \file Flatten.cpp: buffers, offsets and Sigma precomputation (see Flatten.h). A visitor of CIN
/// (cin/Visitor.h) whose methods leave each node's loop IR in exprOut_ / stmtOut_.
#include "loopir/Flatten.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "cin/Layout.h"
#include "cin/Visitor.h"
#include "support/Error.h"
#include "support/Format.h"

namespace spl::loopir {
namespace {

Ty tyOf(ScalarKind k) {
  switch (k) {
    case ScalarKind::F32: return Ty::F32;
    case ScalarKind::F64: return Ty::F64;
    case ScalarKind::I32: return Ty::I32;
    case ScalarKind::I64: return Ty::I64;
    case ScalarKind::Bool: return Ty::I1;
  }
  return Ty::I64;
}

bool hasSumAtom(const Nat &n) {
  for (const Nat::Term &t : n.terms())
    for (const auto &f : t.mono.factors) {
      if (f.first->kind == NatAtomKind::Sum) return true;
      for (const Nat &a : f.first->args)
        if (hasSumAtom(a)) return true;
    }
  return false;
}

/// The widest element `body` loads or stores, in bytes (8 when it touches no memory).
int widestElementBytes(const StmtP &body) {
  int widest = 0;
  auto loads = [&](const Expr &x) {
    if (x.kind == ExprKind::Load) widest = std::max(widest, tyBytes(x.type));
    return false;
  };
  anyStmt(body, [&](const Stmt &st) {
    if (st.kind == StmtKind::Store && st.b) widest = std::max(widest, tyBytes(st.b->type));
    for (const ExprP *e : {&st.a, &st.b, &st.step}) anyExpr(*e, loads);
    return false;
  });
  return widest ? widest : 8;
}

class Flattener : public cin::Visitor {
 public:
  Flattener(const cin::Kernel &k, int indexBits) : k_(k), indexBits_(indexBits) {}

  Function run() {
    fn_.name = k_.name;
    fn_.cuda = k_.cuda;
    fn_.internal = k_.internal;
    fn_.fpContract = k_.fpContract;
    fn_.fpReassoc = k_.fpReassoc;
    if (std::any_of(k_.tensors.begin(), k_.tensors.end(), [](const cin::TensorP &t) { return t->registerTile; }))
      fn_.preferVectorBits = 512;
    fn_.loc = k_.loc;
    fn_.numParams = static_cast<int>(k_.params.size());
    for (const cin::TensorP &t : k_.tensors) tensors_[t->id] = t;
    std::vector<StmtP> entry;
    for (size_t i = 0; i < k_.params.size(); ++i) bindParam(k_.params[i], static_cast<int>(i), entry);
    StmtP body = lowerStmt(k_.body);
    std::vector<StmtP> all = entry;
    all.insert(all.end(), prologue_.begin(), prologue_.end());
    all.push_back(body);
    for (int b : prologueBuffers_) all.push_back(freeBuffer(b));
    fn_.body = block(all);
    return fn_;
  }

 private:
  int newId() { return static_cast<int>(freshNatVar("v").id); }

  Ty indexTy() const { return indexBits_ == 64 ? Ty::I64 : Ty::I32; }

  void bindParam(const cin::KernelParam &p, int index, std::vector<StmtP> &entry) {
    using R = tir::AbiParam;
    const tir::AbiParam &a = p.abi;
    if (a.role == R::Nat || a.role == R::Count || a.role == R::Scalar || a.role == R::Stride) {
      bool nat = a.role != R::Scalar;
      Ty cty = nat ? Ty::I64 : a.isIndex ? indexTy() : tyOf(a.elem);
      Ty want = nat ? Ty::I64 : a.isIndex ? Ty::I64 : tyOf(a.elem);
      int v = static_cast<int>(p.natVar);
      if (cty == want) {
        fn_.scalars.push_back(ScalarParam{v, a.name, cty, index});
        varTy_[v] = cty;
      } else {
        int raw = newId();
        fn_.scalars.push_back(ScalarParam{raw, a.name, cty, index});
        varTy_[raw] = cty;
        entry.push_back(decl(v, a.name, want, cast(var(raw, cty), want)));
        varTy_[v] = want;
      }
      paramVars_.insert(v);
      return;
    }
    const cin::TensorP &t = p.tensor;
    if (!t) throw InternalError("flatten: buffer parameter '" + a.name + "' has no tensor");
    Buffer b;
    b.id = newId();
    b.name = a.name;
    b.isParam = true;
    b.paramIndex = index;
    b.isOutput = a.role == R::OutNat || a.role == R::OutNats || a.role == R::OutBuffer || a.role == R::OutPacked ||
                 a.updated;
    if (a.role == R::Packed || a.role == R::OutPacked) {
      for (size_t f = 0; f < a.packedFields.size(); ++f) b.fields.push_back(a.packedFieldIsIndex[f] ? indexTy() : tyOf(a.packedFields[f]));
    } else if (a.role == R::Nats || a.role == R::OutNats || a.isIndex) {
      b.elem = indexTy();
    } else if (a.role == R::OutNat) {
      b.elem = Ty::I64;
    } else {
      b.elem = tyOf(a.elem);
    }
    size_t leaf = 0;
    bool single = a.role == R::Nats || a.role == R::OutNats || a.role == R::OutNat || t->kind == cin::Tensor::NatsInput;
    if (!single && (a.role == R::Packed || a.role == R::OutPacked)) {
      // The ABI path names the packed array itself; its leaf is the packed one.
      const auto &ls = leavesOf(t);
      for (size_t i = 0; i < ls.size(); ++i)
        if (ls[i].packed && ls[i].path == a.path) leaf = i;
    } else if (!single) {
      int field = -1;
      leaf = cin::leafIndexOf(leavesOf(t), a.path, field);
    }
    buffers_[{t->id, leaf}] = b.id;
    fn_.buffers.push_back(b);
    if (t->kind == cin::Tensor::Input || t->kind == cin::Tensor::NatsInput) inputTensors_.insert(t->id);
  }

  const std::vector<cin::Leaf> &leavesOf(const cin::TensorP &t) {
    auto it = leaves_.find(t->id);
    if (it != leaves_.end()) return it->second;
    return leaves_[t->id] = cin::leavesOf(t->type);
  }

  /// The buffer and packed field of tensor t's leaf `path`. A copy: lowering a nat may add a
  /// buffer (a Sigma prefix) to fn_.buffers, which would leave a pointer into it dangling.
  std::pair<Buffer, int> bufferFor(const cin::TensorP &t, const std::vector<int> &path) {
    int field = -1;
    size_t leaf = 0;
    if (t->kind != cin::Tensor::NatsInput && !t->isIndexArray) leaf = cin::leafIndexOf(leavesOf(t), path, field);
    auto it = buffers_.find({t->id, leaf});
    if (it == buffers_.end()) throw InternalError("flatten: no buffer for tensor '" + t->name + "'");
    return {*fn_.buffer(it->second), field};
  }

  // ---- nats ----------------------------------------------------------------------------------

  cin::SumFn sumFn() {
    return [this](const NatVarId &b, const Nat &upTo, const Nat &elemCount, const Nat &len) -> Nat {
      NatVarId q = freshNatVar(b.name);
      NatSubst s;
      s.vars.emplace(b.id, Nat::var(q));
      Nat body = substitute(elemCount, s);
      Nat closed = Nat::sum(q, Nat(0), upTo, body);
      if (!hasSumAtom(closed)) return closed;
      if (invariant(body, q.id) && invariant(len, -1)) return Nat::lookup(prefixFor(q, body, len), upTo);
      return closed;
    };
  }

  /// Mentions only the position q, parameters and input tensors (so it can run at entry).
  bool invariant(const Nat &n, int64_t q) {
    std::vector<int64_t> ids;
    n.collectIds(ids);
    for (int64_t id : ids)
      if (id != q && !paramVars_.count(static_cast<int>(id)) && !inputTensors_.count(id) && !prefixOf_.count(id))
        return false;
    return true;
  }

  /// A prefix array P with P[j] = sum(q = 0 .. j) body(q) for j in [0, len], computed once at
  /// entry; its id can be used as a Lookup array.
  NatVarId prefixFor(const NatVarId &q, const Nat &body, const Nat &len) {
    NatSubst canon;
    canon.vars.emplace(q.id, Nat::var(NatVarId{-7, "q"}));
    std::string key = substitute(body, canon).key() + "|" + len.key();
    if (auto it = prefixByKey_.find(key); it != prefixByKey_.end()) return it->second;
    NatVarId id = freshNatVar("sigma");
    Buffer b;
    b.id = newId();
    b.name = "sigma" + std::to_string(prefixByKey_.size());
    b.elem = Ty::I64;
    fn_.buffers.push_back(b);
    prefixOf_[id.id] = b.id;
    prefixByKey_[key] = id;
    prologueBuffers_.push_back(b.id);
    prologue_.push_back(allocBuffer(b.id, bin(BinOp::Add, lowerNatTo(len, prologue_), cInt(1))));
    // A plain array of lengths goes to the runtime's Sigma precomputation.
    const NatAtom *lookupAtom = nullptr;
    if (body.terms().size() == 1 && body.terms()[0].coeff == Rat(1) && body.terms()[0].mono.factors.size() == 1 &&
        body.terms()[0].mono.factors[0].second == 1)
      lookupAtom = body.terms()[0].mono.factors[0].first.get();
    if (lookupAtom && lookupAtom->kind == NatAtomKind::Lookup && lookupAtom->args[0] == Nat::var(q) &&
        tensors_.count(lookupAtom->var.id)) {
      auto [src, field] = bufferFor(tensors_[lookupAtom->var.id], {});
      if (field < 0 && (src.elem == Ty::I32 || src.elem == Ty::I64)) {
        prologue_.push_back(sigmaPrefix(b.id, src.id, lowerNatTo(len, prologue_)));
        return id;
      }
    }
    // Otherwise a loop: P[0] = 0; P[j + 1] = P[j] + body(j).
    int qv = static_cast<int>(q.id);
    varTy_[qv] = Ty::I64;
    prologue_.push_back(store(b.id, cInt(0), cInt(0)));
    std::vector<StmtP> inner;
    ExprP step = bin(BinOp::Add, load(b.id, var(qv, Ty::I64), Ty::I64), lowerNatTo(body, inner));
    inner.push_back(store(b.id, bin(BinOp::Add, var(qv, Ty::I64), cInt(1)), step));
    prologue_.push_back(forLoop(qv, q.name, cInt(0), lowerNatTo(len, prologue_), block(inner), LoopKind::Serial));
    return id;
  }

  /// `loop` annotated with the segment cin found (its buffers: the offsets, or the lengths and
  /// the Sigma prefix the function computes of them). A parent that needs statements to
  /// compute, or an array that is not a plain integer buffer, leaves the loop unannotated.
  StmtP withSegment(const StmtP &loop, const cin::SegmentLevel &seg) {
    auto t = tensors_.find(seg.array.id);
    if (t == tensors_.end()) return loop;
    auto [buf, field] = bufferFor(t->second, {});
    if (field >= 0 || (buf.elem != Ty::I32 && buf.elem != Ty::I64)) return loop;
    std::vector<StmtP> pre;
    Segment out;
    out.whole = seg.whole;
    out.parent = lowerNatTo(seg.parent, pre);
    if (!pre.empty()) return loop;
    if (!seg.lengths) {
      out.offsets = buf.id;
    } else {
      out.lengths = buf.id;
      for (const StmtP &p : prologue_)
        if (p->kind == StmtKind::SigmaPrefix && p->source == buf.id) {
          out.offsets = p->buffer;
          out.fromZero = true;
        }
    }
    auto copy = std::make_shared<Stmt>(*loop);
    copy->segment = out;
    return copy;
  }

  /// Where t[indices].leaf is in its buffer: the type's layout, or a view's strides from its
  /// base (cin::Tensor::strides).
  ExprP offsetOf(const cin::Tensor &t, const std::vector<Nat> &indices, const std::vector<int> &leaf) {
    ExprP off = lowerNat(cin::elementOffset(t, indices, leaf, sumFn()));
    if (!t.baseLocal) return off;
    int base = static_cast<int>(t.baseLocal);
    return bin(BinOp::Add, cast(var(base, varTy_.at(base)), Ty::I64), off);
  }

  ExprP lowerNatTo(const Nat &n, std::vector<StmtP> &pre) {
    std::swap(pre, pre_);
    ExprP e = lowerNat(n);
    std::swap(pre, pre_);
    return e;
  }

  ExprP lowerAtom(const NatAtom &a) {
    switch (a.kind) {
      case NatAtomKind::Var:
      case NatAtomKind::Value: {
        int v = static_cast<int>(a.var.id);
        auto it = varTy_.find(v);
        if (it == varTy_.end()) throw InternalError("flatten: nat variable '" + a.var.name + "' is not bound in kernel " + k_.name);
        return cast(var(v, it->second), Ty::I64);
      }
      case NatAtomKind::Lookup: {
        ExprP idx = lowerNat(a.args[0]);
        if (auto p = prefixOf_.find(a.var.id); p != prefixOf_.end()) return load(p->second, idx, Ty::I64);
        auto t = tensors_.find(a.var.id);
        if (t == tensors_.end()) throw InternalError("flatten: lookup into unknown array '" + a.var.name + "'");
        auto [buf, field] = bufferFor(t->second, {});
        Ty et = field >= 0 ? buf.fields[field] : buf.elem;
        return cast(load(buf.id, idx, et, field), Ty::I64);
      }
      case NatAtomKind::Min:
      case NatAtomKind::Max: return mm(a.kind == NatAtomKind::Max, lowerNat(a.args[0]), lowerNat(a.args[1]));
      case NatAtomKind::Div: return bin(BinOp::FloorDiv, lowerNat(a.args[0]), cInt(a.divisor));
      case NatAtomKind::Mod: {
        ExprP x = lowerNat(a.args[0]);
        return bin(BinOp::Sub, x, bin(BinOp::Mul, bin(BinOp::FloorDiv, x, cInt(a.divisor)), cInt(a.divisor)));
      }
      case NatAtomKind::Cond: return sel(lowerCond(*a.cond), lowerNat(a.args[0]), lowerNat(a.args[1]));
      case NatAtomKind::Sum: {
        // No closed form and not precomputable: sum it where it is used.
        int s = newId();
        int q = static_cast<int>(a.var.id);
        varTy_[s] = Ty::I64;
        varTy_[q] = Ty::I64;
        pre_.push_back(decl(s, "sum", Ty::I64, cInt(0)));
        std::vector<StmtP> inner;
        ExprP lo = lowerNat(a.args[0]), hi = lowerNat(a.args[1]);
        ExprP body = lowerNatTo(a.args[2], inner);
        inner.push_back(assignVar(s, bin(BinOp::Add, var(s, Ty::I64), body)));
        pre_.push_back(forLoop(q, a.var.name, lo, hi, block(inner), LoopKind::Serial));
        return var(s, Ty::I64);
      }
    }
    throw InternalError("flatten: unknown nat atom");
  }

  ExprP lowerCond(const NatCond &c) {
    switch (c.kind) {
      case NatCond::Const: return cInt(c.value ? 1 : 0, Ty::I1);
      case NatCond::Cmp: {
        ExprP l = lowerNat(c.lhs);
        BinOp op = c.cmp == NatCmp::Eq ? BinOp::Eq : c.cmp == NatCmp::Ne ? BinOp::Ne : c.cmp == NatCmp::Lt ? BinOp::Lt : BinOp::Le;
        return bin(op, l, cInt(0));
      }
      case NatCond::And: return bin(BinOp::And, lowerCond(*c.args[0]), lowerCond(*c.args[1]));
      case NatCond::Or: return bin(BinOp::Or, lowerCond(*c.args[0]), lowerCond(*c.args[1]));
      case NatCond::Not: return un(ast::UnOp::Not, lowerCond(*c.args[0]));
    }
    return cInt(0, Ty::I1);
  }

  /// A nat's terms with integer coefficients are summed as they are; those with fractions (a
  /// packed triangle's j (j + 1) / 2) times their common denominator, divided exactly once (the
  /// nat and the integer terms are integers, so the rest is too). So an index i + j n -
  /// j (j + 1) / 2 keeps i outside the division, and a loop over i walks memory by one.
  ExprP lowerNat(const Nat &n) {
    int64_t den = 1;
    for (const Nat::Term &t : n.terms()) den = std::lcm(den, t.coeff.den());
    auto product = [&](const Nat::Term &t, Rat c) {
      ExprP prod = cInt(c.num());
      for (const auto &[atom, p] : t.mono.factors) {
        ExprP a = lowerAtom(*atom);
        for (int k = 0; k < p; ++k) prod = bin(BinOp::Mul, prod, a);
      }
      return prod;
    };
    ExprP whole = cInt(0), fractions = cInt(0);
    for (const Nat::Term &t : n.terms()) {
      if (t.coeff.den() == 1) whole = bin(BinOp::Add, whole, product(t, t.coeff));
      else fractions = bin(BinOp::Add, fractions, product(t, t.coeff * Rat(den)));
    }
    if (den == 1) return whole;
    return bin(BinOp::Add, whole, bin(BinOp::ExactDiv, fractions, cInt(den)));
  }

  // ---- expressions and statements (a cin::Visitor: each method leaves its result in
  // exprOut_ or stmtOut_) ------------------------------------------------------------------

  ExprP lowerExpr(const cin::ExprP &e) {
    visit(e);
    internal_assert(exprOut_) << "flatten: an expression without a lowering";
    return std::move(exprOut_);
  }
  /// Sets an expression's lowering (`return produce(x);` in a visit method).
  void produce(ExprP x) { exprOut_ = std::move(x); }

  void visitConst(const cin::Expr &e) override {
    Ty t = tyOf(e.type);
    if (t == Ty::I1) return produce(cInt(e.bval ? 1 : 0, Ty::I1));
    if (isFloatTy(t)) return produce(cFloat(e.fval, t));
    return produce(cInt(e.ival, t));
  }

  void visitLocal(const cin::Expr &e) override {
    Ty t = tyOf(e.type);
    int v = static_cast<int>(e.local);
    auto it = varTy_.find(v);
    if (it == varTy_.end()) throw InternalError(fmt::format("flatten: local %{} used before its declaration", v));
    return produce(cast(var(v, it->second), t));
  }

  void visitNatE(const cin::Expr &e) override {
    Ty t = tyOf(e.type);
    return produce(cast(lowerNat(e.nat), t));
  }

  void visitAccess(const cin::Expr &e) override {
    Ty t = tyOf(e.type);
    auto [buf, field] = bufferFor(e.tensor, e.leaf);
    ExprP off = offsetOf(*e.tensor, e.indices, e.leaf);
    Ty et = field >= 0 ? buf.fields[field] : buf.elem;
    return produce(cast(load(buf.id, off, et, field), t));
  }

  void visitUnary(const cin::Expr &e) override {
    return produce(un(e.unop, lowerExpr(e.args[0])));
  }

  void visitBinary(const cin::Expr &e) override {
    ExprP a = lowerExpr(e.args[0]), b = lowerExpr(e.args[1]);
    if (b->type != a->type) b = cast(b, a->type);
    BinOp op = BinOp::Add;  // every ast::BinOp is mapped below
    switch (e.binop) {
      case ast::BinOp::Add: op = BinOp::Add; break;
      case ast::BinOp::Sub: op = BinOp::Sub; break;
      case ast::BinOp::Mul: op = BinOp::Mul; break;
      case ast::BinOp::Div: op = BinOp::Div; break;
      case ast::BinOp::Mod: op = BinOp::Rem; break;
      case ast::BinOp::Eq: op = BinOp::Eq; break;
      case ast::BinOp::Ne: op = BinOp::Ne; break;
      case ast::BinOp::Lt: op = BinOp::Lt; break;
      case ast::BinOp::Le: op = BinOp::Le; break;
      case ast::BinOp::Gt: op = BinOp::Gt; break;
      case ast::BinOp::Ge: op = BinOp::Ge; break;
      case ast::BinOp::And: op = BinOp::And; break;
      case ast::BinOp::Or: op = BinOp::Or; break;
    }
    return produce(bin(op, a, b, e.reassoc));
  }

  void visitSelect(const cin::Expr &e) override {
    Ty t = tyOf(e.type);
    ExprP c = lowerExpr(e.args[0]);
    ExprP a = cast(lowerExpr(e.args[1]), t), b = cast(lowerExpr(e.args[2]), t);
    return produce(sel(c, a, b));
  }

  void visitConvert(const cin::Expr &e) override {
    Ty t = tyOf(e.type);
    return produce(cast(lowerExpr(e.args[0]), t));
  }

  void visitMinMax(const cin::Expr &e) override {
    Ty t = tyOf(e.type);
    return produce(mm(e.isMax, cast(lowerExpr(e.args[0]), t), cast(lowerExpr(e.args[1]), t)));
  }

  LoopKind loopKind(cin::ForallKind k) {
    switch (k) {
      case cin::ForallKind::Serial: return LoopKind::Serial;
      case cin::ForallKind::Reduction: return LoopKind::Reduction;
      case cin::ForallKind::Parallel: return LoopKind::Parallel;
      case cin::ForallKind::Vector: return LoopKind::Vector;
      case cin::ForallKind::GpuGlobal: return gpuKind(k, LoopKind::GpuGlobal);
      case cin::ForallKind::GpuBlock: return gpuKind(k, LoopKind::GpuBlock);
      case cin::ForallKind::GpuThread: return gpuKind(k, LoopKind::GpuThread);
      case cin::ForallKind::GpuWarp: return gpuKind(k, LoopKind::GpuWarp);
      case cin::ForallKind::GpuLane: return gpuKind(k, LoopKind::GpuLane);
    }
    return LoopKind::Serial;
  }

  LoopKind gpuKind(cin::ForallKind k, LoopKind l) {
    if (!k_.cuda)
      throw CompileError(k_.loc, std::string("GPU-level maps (") + cin::forallKindName(k) +
                                     ") cannot run in a cpu export; export it for cuda");
    return l;
  }

  StmtP withPre(std::vector<StmtP> pre, StmtP s) {
    pre.push_back(std::move(s));
    return block(std::move(pre));
  }

  StmtP lowerStmt(const cin::StmtP &s) {
    // What a statement's expressions need first (prefix arrays) goes before it: each statement
    // collects its own.
    std::vector<StmtP> saved;
    std::swap(saved, pre_);
    visit(s);
    StmtP out = std::move(stmtOut_);
    internal_assert(out) << "flatten: a statement without a lowering";
    std::swap(saved, pre_);
    return out;
  }

  void visitBlock(const cin::Stmt &s) override {
    std::vector<StmtP> stmts;
    for (const cin::StmtP &b : s.body) stmts.push_back(lowerStmt(b));
    stmtOut_ = block(stmts);
  }

  void visitForall(const cin::Stmt &s) override {
    int v = static_cast<int>(s.var);
    varTy_[v] = Ty::I64;
    ExprP lo = lowerNat(s.lo), hi = lowerNat(s.hi);
    ExprP work = s.iterationWork ? lowerNat(*s.iterationWork) : nullptr;
    ExprP growth = s.workGrowth ? lowerNat(*s.workGrowth) : nullptr;
    std::vector<StmtP> pre;
    std::swap(pre, pre_);
    StmtP body = lowerStmt(s.body[0]);
    StmtP loop = forLoop(v, s.varName, lo, hi, body, loopKind(s.forall));
    fn_.preferVectorBits = std::max(fn_.preferVectorBits, s.vectorBits);
    if (s.vectorize || s.unroll || s.vectorWidth || s.interleave || s.maskedTail || s.gatherAhead || s.userKind || s.iterationWork ||
        s.workGrowth || s.rows != ast::GpuRowMapping::Auto || s.knobs.merge()) {
      auto copy = std::make_shared<Stmt>(*loop);
      copy->iterationWork = work;
      copy->workGrowth = growth;
      copy->vectorize = s.vectorize;
      copy->unroll = s.unroll;
      copy->vectorWidth = s.vectorWidth;
      // vectorize(i, bits): the loop's vectors are `bits` wide, LLVM's vector width for it
      // counted in its widest elements (a per-loop width, where the kernel's preference only
      // sets a default: libsplblas's 512 bits lose on short runs that start anywhere in a line).
      if (s.vectorize && s.vectorBits && !s.vectorWidth) copy->vectorWidth = std::max(1, s.vectorBits / (8 * widestElementBytes(body)));
      copy->interleave = s.interleave;
      copy->maskedTail = s.maskedTail;
      copy->gatherAhead = s.gatherAhead;
      copy->userKind = s.userKind;
      copy->rows = s.rows;
      copy->knobs = s.knobs;
      copy->rowsLoc = s.rowsLoc;
      loop = copy;
    }
    if (s.balanceBy) {
      // Balance by the offsets' buffer when it holds plain integers (not a prefix array).
      auto t = tensors_.find(s.balanceBy);
      if (t != tensors_.end()) {
        auto [buf, field] = bufferFor(t->second, {});
        if (field < 0 && (buf.elem == Ty::I32 || buf.elem == Ty::I64)) {
          auto copy = std::make_shared<Stmt>(*loop);
          copy->balanceBy = buf.id;
          loop = copy;
        }
      }
    }
    if (s.segment) loop = withSegment(loop, *s.segment);
    stmtOut_ = withPre(pre, loop);
  }

  void visitAssign(const cin::Stmt &s) override {
    const cin::ExprP &lhs = s.lhs;
    auto [buf, field] = bufferFor(lhs->tensor, lhs->leaf);
    ExprP off = offsetOf(*lhs->tensor, lhs->indices, lhs->leaf);
    Ty et = field >= 0 ? buf.fields[field] : buf.elem;
    ExprP v = s.compound && !s.atomic  // lhs op= value: store lhs op value
                  ? lowerExpr(s.isMinMax ? cin::minmax(s.isMax, lhs, s.value, lhs->type)
                                         : cin::binary(s.op, lhs, s.value, lhs->type))
                  : lowerExpr(s.value);
    if (s.atomic) {
      internal_assert(s.compound && field < 0) << "flatten: an atomic assignment must be a compound update of a plain buffer";
      AtomicOp op = !s.isMinMax ? AtomicOp::Add : s.isMax ? AtomicOp::Max : AtomicOp::Min;
      internal_assert(s.isMinMax || s.op == ast::BinOp::Add) << "flatten: atomic " << ast::binOpToken(s.op);
      std::vector<StmtP> pre;
      std::swap(pre, pre_);
      stmtOut_ = withPre(pre, atomicUpdate(buf.id, off, op, cast(v, et)));
      return;
    }
    std::vector<StmtP> pre;
    std::swap(pre, pre_);
    stmtOut_ = withPre(pre, store(buf.id, off, cast(v, et), field));
  }

  void visitDeclLocal(const cin::Stmt &s) override {
    int v = static_cast<int>(s.local);
    Ty t = tyOf(s.type);
    ExprP init = s.value ? cast(lowerExpr(s.value), t) : nullptr;
    varTy_[v] = t;
    std::vector<StmtP> pre;
    std::swap(pre, pre_);
    stmtOut_ = withPre(pre, decl(v, s.localName, t, init));
  }

  void visitSetLocal(const cin::Stmt &s) override {
    int v = static_cast<int>(s.local);
    ExprP val = cast(lowerExpr(s.value), varTy_.at(v));
    std::vector<StmtP> pre;
    std::swap(pre, pre_);
    stmtOut_ = withPre(pre, assignVar(v, val));
  }

  void visitIf(const cin::Stmt &s) override {
    ExprP c = lowerExpr(s.value);
    std::vector<StmtP> pre;
    std::swap(pre, pre_);
    StmtP t = lowerStmt(s.body[0]);
    StmtP f = s.body[1] ? lowerStmt(s.body[1]) : nullptr;
    stmtOut_ = withPre(pre, ifThen(c, t, f));
  }

  void visitAlloc(const cin::Stmt &s) override {
    const cin::TensorP &t = s.tensor;
    std::vector<StmtP> stmts, frees;
    const auto &ls = leavesOf(t);
    for (size_t i = 0; i < ls.size(); ++i) {
      Buffer b;
      b.id = newId();
      b.name = t->name + (ls.size() > 1 ? "_" + std::to_string(i) : "");
      const TypeP &lt = ls[i].type;
      if (ls[i].packed) {
        for (const TypeP &c : lt->elems) b.fields.push_back(c->kind == TypeKind::Idx ? Ty::I64 : tyOf(c->scalar));
      } else {
        b.elem = lt->kind == TypeKind::Idx ? Ty::I64 : tyOf(lt->scalar);
      }
      fn_.buffers.push_back(b);
      buffers_[{t->id, i}] = b.id;
      stmts.push_back(allocBuffer(b.id, lowerNat(cin::leafCount(t->type, ls[i].path, sumFn()))));
      frees.push_back(freeBuffer(b.id));
    }
    std::vector<StmtP> pre;
    std::swap(pre, pre_);
    stmts.insert(stmts.begin(), pre.begin(), pre.end());
    stmts.push_back(lowerStmt(s.body[0]));
    stmts.insert(stmts.end(), frees.begin(), frees.end());
    stmtOut_ = block(stmts);
  }

  void visitBarrier(const cin::Stmt &) override {
    auto b = std::make_shared<Stmt>();
    b->kind = StmtKind::Barrier;
    stmtOut_ = b;
  }

  void visitFail(const cin::Stmt &s) override {
    auto r = std::make_shared<Stmt>();
    r->kind = StmtKind::Return;
    r->code = s.code;
    stmtOut_ = r;
  }

  const cin::Kernel &k_;
  int indexBits_;
  Function fn_;
  std::map<int64_t, cin::TensorP> tensors_;
  std::map<std::pair<int64_t, size_t>, int> buffers_;
  std::map<int64_t, std::vector<cin::Leaf>> leaves_;
  std::map<int, Ty> varTy_;
  std::set<int> paramVars_;
  std::set<int64_t> inputTensors_;
  std::map<int64_t, int> prefixOf_;          // prefix array id (as a Lookup array) -> buffer
  std::map<std::string, NatVarId> prefixByKey_;
  std::vector<StmtP> prologue_;
  std::vector<int> prologueBuffers_;
  std::vector<StmtP> pre_;
  ExprP exprOut_;   // the lowering of the expression just visited
  StmtP stmtOut_;   // the lowering of the statement just visited
};

}  // namespace

Function flatten(const cin::Kernel &k, int indexBits) {
  Flattener f(k, indexBits);
  return f.run();
}

}  // namespace spl::loopir
