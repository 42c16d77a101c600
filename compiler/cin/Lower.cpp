/// \file Lower.cpp: kernel parameters, results and the NAME_size variant (see Lower.h).
/// Each C parameter of the ABI is bound to what it carries: a nat variable, a scalar local, or
/// one leaf buffer of a tensor. Array parameters become tensors whose id is the parameter's
/// variable id, so the Lookup atoms of types (toNat(offs@i)) name them directly. A dependent
/// pair parameter becomes its nats (or nat) and a tensor for its data, whose layout refers to
/// that nats. A dependent-pair result writes its nats (copied) or nat, then its data.
#include "cin/Lower.h"

#include <set>

#include "cin/Layout.h"
#include "cin/LowerCommon.h"
#include "support/Error.h"

namespace spl::cin {
namespace lower {

namespace {

/// Gives every forall of a kernel a distinct name (i, i_1, i_2, ...), so `--emit=cin` and
/// schedule commands can tell them apart. The loop's uses in its body take the new name too
/// (the variable's id is unchanged), so that printed subscripts name the loop they belong to.
StmtP uniqueLoopNames(const StmtP &s, std::map<std::string, int> &seen) {
  if (!s) return s;
  auto c = std::make_shared<Stmt>(*s);
  if (s->kind == StmtKind::Forall) {
    int n = seen[s->varName]++;
    if (n > 0) {
      c->varName = s->varName + "_" + std::to_string(n);
      NatSubst rename;
      rename.vars.emplace(s->var, Nat::var(NatVarId{s->var, c->varName}));
      for (StmtP &b : c->body) b = substitute(b, rename);
    }
  }
  for (StmtP &b : c->body) b = uniqueLoopNames(b, seen);
  return c;
}

TypeP natsType() { return types::array(Nat(0), types::idx(Nat(0))); }

bool isOutputRole(tir::AbiParam::Role r) {
  return r == tir::AbiParam::OutNat || r == tir::AbiParam::OutNats || r == tir::AbiParam::OutBuffer ||
         r == tir::AbiParam::OutPacked;
}

}  // namespace

std::shared_ptr<Tensor> makeTensor(Tensor::Kind kind, int64_t id, const std::string &name, TypeP type) {
  auto t = std::make_shared<Tensor>();
  t->kind = kind;
  t->id = id;
  t->name = name;
  t->type = std::move(type);
  return t;
}

Kernel Lowerer::run() {
  const tir::Def &d = *ex_.def;
  kernel_.name = ex_.cname + (opts_.cuda ? "_cuda" : "") + (opts_.sizeFunction ? "_size" : "");
  kernel_.cuda = opts_.cuda;
  kernel_.sizeFunction = opts_.sizeFunction;
  kernel_.loc = ex_.loc;
  Env env;
  env.typeArgs = ex_.typeArgs;
  std::vector<KernelParam> params(abi_.params.size());
  for (size_t i = 0; i < abi_.params.size(); ++i) params[i].abi = abi_.params[i];
  pushBlock();

  for (size_t di = 0; di < d.params.size(); ++di) {
    const tir::DefParam &dp = d.params[di];
    std::vector<size_t> mine;
    for (size_t i = 0; i < abi_.params.size(); ++i)
      if (abi_.params[i].defParam == static_cast<int>(di)) mine.push_back(i);
    switch (dp.sort) {
      case tir::DefParam::Data: break;
      case tir::DefParam::Nat:
        if (auto fixed = ex_.natArgs.find(dp.natVar.id); fixed != ex_.natArgs.end())
          env.nats.vars[dp.natVar.id] = Nat(fixed->second);  // fixed by the export: no C parameter
        else
          params[mine.at(0)].natVar = dp.natVar.id;
        break;
      case tir::DefParam::Nats: {
        auto t = makeTensor(Tensor::NatsInput, dp.natVar.id, dp.name, natsType());
        t->isIndexArray = true;
        kernel_.tensors.push_back(t);
        params[mine.at(0)].tensor = t;
        break;
      }
      case tir::DefParam::Value: {
        TypeP t = kt(dp.value->type, env);
        ValP v;
        if (t->kind == TypeKind::DepPair) {
          auto pair = std::make_shared<Val>();
          pair->kind = Val::Pair;
          pair->overNats = t->pairOverNats;
          const tir::AbiParam &first = abi_.params[mine.at(0)];
          NatSubst s;
          if (t->pairOverNats) {
            auto nt = makeTensor(Tensor::NatsInput, freshNatVar(first.name).id, first.name, natsType());
            nt->isIndexArray = true;
            kernel_.tensors.push_back(nt);
            params[mine[0]].tensor = nt;
            pair->firstNats = NatVarId{nt->id, nt->name};
            s.arrays.emplace(t->binder.id, pair->firstNats);
          } else {
            NatVarId k = freshNatVar(first.name);
            params[mine[0]].natVar = k.id;
            pair->first = Nat::var(k);
            s.vars.emplace(t->binder.id, pair->first);
          }
          TypeP body = types::substitute(t->elems[0], s);
          auto bt = makeTensor(Tensor::Input, freshNatVar(dp.name).id, dp.name, body);
          kernel_.tensors.push_back(bt);
          for (size_t k = 1; k < mine.size(); ++k) params[mine[k]].tensor = bt;
          pair->second = tensorView(bt, body, {}, {});
          v = pair;
        } else if (t->kind == TypeKind::Array) {
          auto tt = makeTensor(Tensor::Input, dp.value->id, dp.name, t);
          tt->updated = ex_.updatesInPlace(static_cast<int>(di));
          for (size_t k : mine) {
            if (abi_.params[k].role != tir::AbiParam::Stride) {
              params[k].tensor = tt;
              continue;
            }
            params[k].natVar = freshNatVar(abi_.params[k].name).id;
            applyView(*ex_.viewOf(static_cast<int>(di)), *tt, params[k].natVar);
          }
          kernel_.tensors.push_back(tt);
          v = tensorView(tt, t, {}, {});
        } else {
          // Scalars and tuples of scalars arrive by value: one local per component.
          std::vector<ExprP> comps;
          for (size_t k = 0; k < mine.size(); ++k) {
            const tir::AbiParam &ap = abi_.params[mine[k]];
            int64_t id = mine.size() == 1 ? dp.value->id : freshNatVar(ap.name).id;
            params[mine[k]].natVar = id;
            comps.push_back(local(id, ap.isIndex ? Scalar::I64 : ap.elem));
          }
          if (t->kind == TypeKind::Tuple) {
            std::function<ValP(const TypeP &, size_t &)> build = [&](const TypeP &ty, size_t &pos) -> ValP {
              if (ty->kind != TypeKind::Tuple) return scalarVal(comps[pos++]);
              std::vector<ValP> parts;
              for (const TypeP &e : ty->elems) parts.push_back(build(e, pos));
              return tupleVal(std::move(parts));
            };
            size_t pos = 0;
            v = build(t, pos);
          } else {
            v = scalarVal(comps.at(0));
          }
        }
        bindValue(env, dp.value, v);
        break;
      }
    }
    // --checked: a Count parameter carries the element count of its tensor's buffers.
    for (size_t k : mine)
      if (abi_.params[k].role == tir::AbiParam::Count) params[k].natVar = freshNatVar(abi_.params[k].name).id;
  }

  if (opts_.checked) validateInputs(params);

  TypeP rt = kt(d.result, env);
  std::vector<size_t> outs;
  for (size_t i = 0; i < abi_.params.size(); ++i)
    if (isOutputRole(abi_.params[i].role)) outs.push_back(i);
  if (d.body->kind == tir::ExprKind::Einsum) return lowerEinsumBody(*d.body, env, rt, params, outs);
  if (isInspector(ex_)) return lowerInspectBody(*d.body, env, rt, params, outs);

  ValP result = eval(d.body, env);

  // The data type of the result with its pair component bound to the value's nat or nats.
  TypeP dataType = rt;
  if (rt->kind == TypeKind::DepPair) {
    if (result->kind != Val::Pair) internal_error_at(d.loc) << "a dependent-pair result without a pair value";
    NatSubst s;
    if (rt->pairOverNats) s.arrays.emplace(rt->binder.id, result->firstNats);
    else s.vars.emplace(rt->binder.id, result->first);
    dataType = types::substitute(rt->elems[0], s);
  }

  if (opts_.sizeFunction) {
    // NAME_size: the element count of each output pointer, computed from the inputs.
    std::vector<Nat> sizes;
    for (size_t i : outs) {
      const tir::AbiParam &ap = abi_.params[i];
      switch (ap.role) {
        case tir::AbiParam::OutNat: sizes.push_back(Nat(1)); break;
        case tir::AbiParam::OutNats: sizes.push_back(natsCount(rt->elems[0], rt->binder.id)); break;
        default: sizes.push_back(leafCount(dataType, ap.path)); break;
      }
    }
    auto st = makeTensor(Tensor::Output, freshNatVar("sizes").id, "sizes",
                         types::array(Nat(static_cast<int64_t>(sizes.size())), types::scalar(ScalarKind::I64)));
    kernel_.tensors.push_back(st);
    for (size_t j = 0; j < sizes.size(); ++j)
      emit(assign(access(st, {Nat(static_cast<int64_t>(j))}, {}, Scalar::I64), natExpr(sizes[j])));
    kernel_.outputSizes = sizes;
    kernel_.params = sizeFunctionParams(params, st);
    kernel_.body = popBlock();
    return kernel_;
  }

  size_t firstData = 0;
  if (rt->kind == TypeKind::DepPair) {
    const tir::AbiParam &fp = abi_.params[outs.at(0)];
    firstData = 1;
    if (fp.role == tir::AbiParam::OutNats) {
      auto nt = makeTensor(Tensor::Output, freshNatVar(fp.name).id, fp.name,
                           types::array(natsCount(rt->elems[0], rt->binder.id), types::idx(Nat(0))));
      nt->isIndexArray = true;
      kernel_.tensors.push_back(nt);
      params[outs[0]].tensor = nt;
      // The result's nats is the value's (n + 1 entries for csr) rebased to start at 0: an
      // assembled pos array starts at 0 (LANGUAGE.md 6), and the data is written from position
      // 0 whatever the value's nats start at (an input's may start anywhere).
      loop("j", Nat(0), nt->type->len, ForallKind::Parallel, [&](const Nat &j) {
        emit(assign(access(nt, {j}, {}, Scalar::I64),
                    natExpr(Nat::lookup(result->firstNats, j) - Nat::lookup(result->firstNats, Nat(0)))));
      });
    } else {
      auto kt1 = makeTensor(Tensor::Output, freshNatVar(fp.name).id, fp.name, types::scalar(ScalarKind::I64));
      kernel_.tensors.push_back(kt1);
      params[outs[0]].tensor = kt1;
      emit(assign(access(kt1, {}, {}, Scalar::I64), natExpr(result->first)));
    }
  }
  auto out = makeTensor(Tensor::Output, freshNatVar("out").id, "out", dataType);
  kernel_.tensors.push_back(out);
  for (size_t k = firstData; k < outs.size(); ++k) params[outs[k]].tensor = out;
  if (!ex_.resultInto.empty()) intoInputs(out);
  write(rt->kind == TypeKind::DepPair ? result->second : result, out, {}, {});
  kernel_.params = params;
  kernel_.body = popBlock();
  return kernel_;
}

void Lowerer::applyView(const tir::Export::View &view, Tensor &t, int64_t strideLocal) {
  Nat stride = Nat::value(NatVarId{strideLocal, view.stride});
  switch (view.kind) {
    case tir::Export::View::Increment: t.strides = {stride}; break;
    case tir::Export::View::ColMajor: t.strides = {Nat(1), stride}; break;
    case tir::Export::View::RowMajor: t.strides = {stride, Nat(1)}; break;
  }
  // A vector's base: 0, except for a negative increment, which walks the vector from its far
  // end (element i at (n - 1 - i) * -inc, the Fortran BLAS convention).
  ExprP strideValue = local(strideLocal, Scalar::I64);
  if (view.kind == tir::Export::View::Increment) {
    int64_t base = freshNatVar(t.name + "_base").id;
    t.baseLocal = base;
    ExprP fromEnd = binary(ast::BinOp::Mul, natExpr(Nat(1) - t.type->len), strideValue, Scalar::I64);
    emit(declLocal(base, t.name + "_base", Scalar::I64,
                   select(binary(ast::BinOp::Lt, strideValue, constInt(0), Scalar::Bool), fromEnd, constInt(0), Scalar::I64)));
  }
  // A matrix written in place must not have overlapping elements: a leading dimension below
  // its other dimension would put some on others, where iterations that run at once would race.
  // (A vector's increment of 0 is the reference BLAS's: every iteration on one element, in order;
  // cin/InPlace runs that case serially. Read-only views are the caller's to get right, as the
  // buffers' lengths are.)
  if (t.updated && view.kind != tir::Export::View::Increment) {
    bool col = view.kind == tir::Export::View::ColMajor;
    Nat least = col ? t.type->len : t.type->elems[0]->len;
    Nat extent = col ? t.type->elems[0]->len : t.type->len;  // more than one in the strided dimension
    ExprP tooSmall = binary(ast::BinOp::Lt, strideValue, natExpr(Nat::max(least, Nat(1))), Scalar::Bool);
    ExprP matters = binary(ast::BinOp::Lt, constInt(1), natExpr(extent), Scalar::Bool);
    emit(ifThen(binary(ast::BinOp::And, matters, tooSmall, Scalar::Bool), failWith(1, view.loc)));
  }
}

void Lowerer::intoInputs(const TensorP &out) {
  std::vector<Leaf> leaves = leavesOf(out->type);
  internal_assert(leaves.size() == ex_.resultInto.size())
      << "the result has " << leaves.size() << " leaves for " << ex_.resultInto.size() << " parameters in 'result in'";
  kernel_.resultTensor = out;
  for (size_t k = 0; k < leaves.size(); ++k) {
    int64_t id = ex_.def->params[static_cast<size_t>(ex_.resultInto[k])].value->id;
    TensorP input;
    for (const TensorP &t : kernel_.tensors)
      if (t->id == id) input = t;
    internal_assert(input) << "no tensor for the parameter the result goes into";
    kernel_.resultInto.emplace_back(leaves[k].path, input);
  }
}

std::vector<KernelParam> Lowerer::sizeFunctionParams(const std::vector<KernelParam> &params, const TensorP &sizes) const {
  std::vector<KernelParam> inputs;
  for (size_t i = 0; i < params.size(); ++i)
    if (!isOutputRole(abi_.params[i].role)) inputs.push_back(params[i]);
  KernelParam sp;
  sp.abi.role = tir::AbiParam::OutBuffer;
  sp.abi.name = "sizes";
  sp.abi.ctype = "int64_t *";
  sp.abi.elem = ScalarKind::I64;
  sp.tensor = sizes;
  inputs.push_back(sp);
  return inputs;
}

Kernel Lowerer::lowerEinsumBody(const tir::Expr &body, const Env &env, const TypeP &rt, std::vector<KernelParam> &params,
                                const std::vector<size_t> &outs) {
  TensorP sizes;
  if (opts_.sizeFunction) {
    auto st = makeTensor(Tensor::Output, freshNatVar("sizes").id, "sizes", types::array(Nat(3), types::scalar(ScalarKind::I64)));
    kernel_.tensors.push_back(st);
    sizes = st;
  }
  TensorP outNats;
  size_t firstData = 0;
  if (!opts_.sizeFunction && rt->kind == TypeKind::DepPair) {
    const tir::AbiParam &fp = abi_.params[outs.at(0)];
    auto nt = makeTensor(Tensor::Output, freshNatVar(fp.name).id, fp.name, types::array(Nat(0), types::idx(Nat(0))));
    nt->isIndexArray = true;
    kernel_.tensors.push_back(nt);
    params[outs[0]].tensor = nt;
    outNats = nt;
    firstData = 1;
  }
  auto makeData = [&](const TypeP &dataType) -> TensorP {
    auto out = makeTensor(Tensor::Output, freshNatVar("out").id, "out", dataType);
    kernel_.tensors.push_back(out);
    for (size_t k = firstData; k < outs.size(); ++k) params[outs[k]].tensor = out;
    return out;
  };
  auto makeOutput = [&](const TypeP &dataType) -> TensorP {
    TensorP out = makeData(dataType);
    if (!ex_.resultInto.empty()) intoInputs(out);
    return out;
  };
  einsumIntoOutputs(body, env, rt, makeOutput, outNats, sizes);
  if (opts_.sizeFunction) {
    kernel_.params = sizeFunctionParams(params, sizes);
  } else {
    kernel_.params = params;
  }
  kernel_.body = popBlock();
  return kernel_;
}

}  // namespace lower

bool isInspector(const tir::Export &ex) {
  const tir::ExprP &b = ex.def->body;
  return b && b->kind == tir::ExprKind::Prim && b->prim == tir::Prim::Inspect;
}

Kernel lowerExport(const tir::Export &ex, const tir::Abi &abi, const LowerOptions &opts) {
  lower::Lowerer l(ex, abi, opts);
  Kernel k;
  // Errors raised where no source position is at hand point at the export being lowered.
  try {
    k = l.run();
  } catch (const CompileError &e) {
    if (e.loc.valid()) throw;
    throw CompileError(ex.loc, std::string(e.what()) + " (in export " + ex.cname + ")");
  } catch (const NotSupported &e) {
    if (e.loc.valid()) throw;
    throw NotSupported(ex.loc, std::string(e.what()) + " (in export " + ex.cname + ")");
  } catch (const InternalError &e) {
    if (e.loc.valid()) throw;
    throw InternalError(std::string(e.what()) + " (in export " + ex.cname + ")", ex.loc);
  }
  std::map<std::string, int> seen;
  k.body = lower::uniqueLoopNames(k.body, seen);
  return k;
}

}  // namespace spl::cin
