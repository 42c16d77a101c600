/// \file LowerCommon.h (private to cin/): the state of the TIR -> CIN lowering, shared by
/// Lower.cpp (kernel parameters and results), LowerFunctional.cpp (expressions and the
/// functional primitives) and LowerEinsum.cpp (index notation).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cin/Cin.h"
#include "cin/Lower.h"

namespace spl::cin::lower {

struct Val;
struct Env;
using ValP = std::shared_ptr<const Val>;
using EnvP = std::shared_ptr<const Env>;
using Callback = std::function<void(const Nat &, ValP)>;

/// A symbolic value: a scalar expression, a tuple, an array view or producer, a closure or a
/// dependent pair.
struct Val {
  enum Kind { Scalar, Tuple, Array, Fun, Pair } kind = Scalar;
  ExprP scalar;
  std::vector<ValP> parts;
  // Array: `elem` gives random access (may be empty); `produce` emits the loop itself (may be
  // empty: then a forall over `elem` of kind `loopKind`).
  TypeP type;
  Nat len;
  std::function<ValP(const Nat &)> elem;
  std::function<void(const Callback &)> produce;
  ForallKind loopKind = ForallKind::Parallel;
  TensorP tensor;  // backed by a tensor (a parameter or a temporary), from `prefix`/`leaf`
  std::vector<Nat> prefix;
  std::vector<int> leaf;
  // Fun
  tir::ExprP lambda;
  EnvP env;
  // Pair: (first: nat) or (firstNats: a tensor of naturals), second
  bool overNats = false;
  Nat first;
  NatVarId firstNats;
  ValP second;
};

/// The environment of evaluation: TIR variables -> values, and TIR nat/nats variables and
/// data parameters -> kernel nats, tensors and scalar types.
struct Env {
  NatSubst nats;
  std::map<int64_t, ValP> vals;
  std::map<int64_t, TypeP> typeArgs;
};

/// An argument of a closure: a nat, a nats (a tensor id) or a value.
struct Bound {
  Nat nat;
  NatVarId nats;
  ValP val;
  /// A value argument; a position (a nat) argument. Built as named objects: GCC 12 reports
  /// `Bound{n, {}, v}` temporaries' string member as maybe uninitialized.
  static Bound value(ValP v) {
    Bound b;
    b.val = std::move(v);
    return b;
  }
  static Bound position(Nat n) {
    Bound b;
    b.nat = std::move(n);
    return b;
  }
};

/// Loops that run on the threads of one GPU block.
bool isGpuThreadLevel(ForallKind k);

/// A tensor of a kernel: its kind, id (a fresh NatVarId's, or the Var it stands for), name and
/// type.
std::shared_ptr<Tensor> makeTensor(Tensor::Kind kind, int64_t id, const std::string &name, TypeP type);

class Lowerer {
 public:
  Lowerer(const tir::Export &ex, const tir::Abi &abi, const LowerOptions &opts)
      : ex_(ex), abi_(abi), opts_(opts), checked_(opts.checked) {}
  Kernel run();
  void validateInputs(const std::vector<KernelParam> &params);
  Kernel lowerEinsumBody(const tir::Expr &body, const Env &env, const TypeP &rt, std::vector<KernelParam> &params,
                         const std::vector<size_t> &outs);

  /// A view's strides and base on its input (`with x: inc(incx)`), the base set and the
  /// stride checked (an in-place array needs distinct elements) at the kernel's entry.
  void applyView(const tir::Export::View &view, Tensor &t, int64_t strideLocal);
  /// `with result in x`: the result tensor `out` and the inputs its leaves go into, for
  /// cin/InPlace to rewrite.
  void intoInputs(const TensorP &out);
  /// NAME_size's parameters: the inputs of `params`, then `int64_t *sizes` bound to `sizes`.
  std::vector<KernelParam> sizeFunctionParams(const std::vector<KernelParam> &params, const TensorP &sizes) const;
  /// An exported def whose body is `inspect(A)`: the PLDI'15 inspector (LowerInspect.cpp).
  Kernel lowerInspectBody(const tir::Expr &body, const Env &env, const TypeP &rt, std::vector<KernelParam> &params,
                          const std::vector<size_t> &outs);

  // blocks and loops
  void pushBlock();
  StmtP popBlock();
  void emit(StmtP s) { blocks_.back().push_back(std::move(s)); }
  void loop(const std::string &name, const Nat &lo, const Nat &hi, ForallKind kind,
            const std::function<void(const Nat &)> &body, SourceLoc loc = {});
  int64_t newLocal(const std::string &name, Scalar t, ExprP init);

  // types
  TypeP kt(const TypeP &t, const Env &env) const;
  Scalar sk(const TypeP &t, const Env &env) const;

  // values
  ValP scalarVal(ExprP e);
  ValP tupleVal(std::vector<ValP> parts);
  std::shared_ptr<Val> arrayVal(const TypeP &type);
  ValP tensorView(const TensorP &t, const TypeP &type, std::vector<Nat> prefix, std::vector<int> leaf);
  Nat natOf(const ValP &v);
  static bool trivial(const ExprP &e);
  void bindValue(Env &env, const tir::VarP &var, ValP x);
  ValP apply(const ValP &f, const std::vector<Bound> &args);
  void produceAll(const ValP &arr, const Callback &cb, SourceLoc loc = {});
  ValP elemAt(ValP arr, const Nat &i);
  ValP materialize(const ValP &v, const std::string &name);
  /// A temporary of the kernel, allocated here (its Alloc marker: it lives to the block's end).
  TensorP newTemp(const std::string &name, const TypeP &type);
  void write(const ValP &v, const TensorP &t, std::vector<Nat> idx, std::vector<int> leaf);
  std::vector<ExprP> leaves(const ValP &v);
  ValP rebuild(const ValP &shape, const std::vector<ExprP> &ls, size_t &pos);
  ValP accumulate(const ValP &op, const ValP &init, const ValP &arr, bool reassoc, SourceLoc loc,
                  const std::function<void(const ValP &acc, const Nat &pos)> &after);
  /// A reduce over tuples whose combination couples the accumulators, in `lanes` partial
  /// accumulators (see the definition).
  void accumulateInLanes(int64_t lanes, int64_t vector, const ValP &op, const ValP &acc, const ValP &arr,
                         const std::function<void(const Nat &, const ValP &)> &step, SourceLoc loc);

  // evaluation
  ValP eval(const tir::ExprP &e, const Env &env);
  ValP evalIf(const tir::Expr &e, const Env &env);
  ValP evalPrim(const tir::Expr &e, const Env &env);
  ValP nestedView(ValP a, const TypeP &rt, const char *what, std::function<Nat(const Nat &, const Nat &)> index);
  /// The lowerings, named in tir/Primitives.def beside each primitive's typing rule (`rt`: the
  /// call's result type in the kernel).
  ValP lowerMap(const tir::Expr &e, const Env &env, const TypeP &rt);
  ValP lowerZip(const tir::Expr &e, const Env &env, const TypeP &rt);
  ValP lowerUnzip(const tir::Expr &e, const Env &env, const TypeP &rt);
  ValP lowerSplit(const tir::Expr &e, const Env &env, const TypeP &rt);
  ValP lowerJoin(const tir::Expr &e, const Env &env, const TypeP &rt);
  ValP lowerTranspose(const tir::Expr &e, const Env &env, const TypeP &rt);
  ValP lowerAsDepArray(const tir::Expr &e, const Env &env, const TypeP &rt);
  ValP lowerTakeOrDrop(const tir::Expr &e, const Env &env, const TypeP &rt);
  ValP lowerGenerate(const tir::Expr &e, const Env &env, const TypeP &rt);
  ValP lowerRecur(const tir::Expr &e, const Env &env, const TypeP &rt);
  ValP lowerIota(const tir::Expr &e, const Env &env, const TypeP &rt);
  ValP lowerStrided(const tir::Expr &e, const Env &env, const TypeP &rt);
  ValP lowerLen(const tir::Expr &e, const Env &env, const TypeP &rt);
  ValP lowerReduceOrFold(const tir::Expr &e, const Env &env, const TypeP &rt);
  ValP lowerScan(const tir::Expr &e, const Env &env, const TypeP &rt);
  ValP lowerWhich(const tir::Expr &e, const Env &env, const TypeP &rt);
  ValP lowerLiftNat(const tir::Expr &e, const Env &env, const TypeP &rt);
  ValP lowerLiftNats(const tir::Expr &e, const Env &env, const TypeP &rt);
  ValP lowerMakeDepPair(const tir::Expr &e, const Env &env, const TypeP &rt);
  ValP lowerMatchDepPair(const tir::Expr &e, const Env &env, const TypeP &rt);
  ValP lowerInspect(const tir::Expr &e, const Env &env, const TypeP &rt);
  ValP lowerReduceToNat(const tir::Expr &e, const Env &env, const TypeP &rt);
  ValP evalEinsum(const tir::Expr &e, const Env &env);
  /// An exported def whose body is an einsum writes straight into the kernel's outputs:
  /// `makeData` creates the output data tensor of a given layout; `outNats` is the output
  /// offsets of a sparse result; in NAME_size, `sizes` receives the output sizes instead.
  void einsumIntoOutputs(const tir::Expr &e, const Env &env, const TypeP &rt,
                         const std::function<TensorP(const TypeP &)> &makeData, const TensorP &outNats,
                         const TensorP &sizes);
  ForallKind mapKind(tir::Prim p) const;
  void checkIndex(const Nat &pos, const Nat &len, SourceLoc loc);

  const tir::Export &ex_;
  const tir::Abi &abi_;
  LowerOptions opts_;
  bool checked_;
  Kernel kernel_;
  std::vector<std::vector<StmtP>> blocks_;
  int inlineDepth_ = 0;
  /// Set while a producer (a join's rows, a scan) delivers its elements to a consumer that
  /// needs them in order (fold, scan): the producer's loops then run in order (Serial), or as a
  /// Reduction for a reassociable reduce, whatever kind the producer asked for.
  std::optional<ForallKind> producerOrder_;
};

}  // namespace spl::cin::lower
