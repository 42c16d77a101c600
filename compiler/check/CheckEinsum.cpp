/// \file CheckEinsum.cpp: einsum statements (LANGUAGE.md section 6).
/// Each index variable gets one extent, which must be nat-equal in every access and in the
/// output; indices absent from the output are summed. Operand values must have the result's
/// scalar type. The result's format is the def's declared result type.
#include "check/CheckerImpl.h"
#include "check/Levels.h"

namespace spl::check {

tir::ExprP Checker::checkEinsum(const ast::Expr &e, const TypeP &expected) {
  const ast::EinsumSyn &out = *e.einsum;
  if (!expected) fail(e.loc, "einsum needs the result type of its definition to be declared (it gives the result's format)");
  TypeP rt = zonk(expected);
  std::string why;
  auto outShape = tensorShape(rt, why);
  if (!outShape) fail(e.loc, "the result type `" + types::str(rt) + "` of this einsum is not a tensor: " + why);
  if (outShape->indices.size() != out.indices.size())
    fail(out.loc, fmt::format("'{}' has {} index level{} in the result type `{}`, but is indexed with {}", out.tensor,
                              outShape->indices.size(), outShape->indices.size() == 1 ? "" : "s", types::str(rt),
                              out.indices.size()));
  auto ein = std::make_shared<tir::Einsum>();
  ein->outName = out.tensor;
  ein->resultType = rt;
  if (outShape->value->kind != TypeKind::Scalar) fail(e.loc, "einsum results must hold scalars, found `" + types::str(outShape->value) + "`");
  ein->scalar = outShape->value->scalar;
  std::map<std::string, int> indexOf;
  std::map<std::string, SourceLoc> firstUse;
  auto useIndex = [&](const ast::EinsumIndex &ix, const Nat &extent, const std::string &where) -> int {
    auto it = indexOf.find(ix.name);
    if (it == indexOf.end()) {
      int k = static_cast<int>(ein->indices.size());
      ein->indices.push_back(tir::EinsumIndexVar{freshNatVar(ix.name), extent});
      ein->indexNames.push_back(ix.name);
      indexOf[ix.name] = k;
      firstUse[ix.name] = ix.loc;
      return k;
    }
    const Nat &have = ein->indices[it->second].extent;
    if (!unifyNat(have, extent)) {
      diags_.error(ix.loc, "einsum index '" + ix.name + "' ranges over `" + zonk(extent).str() + "` in " + where +
                               ", but over `" + zonk(have).str() + "` where it is first used");
      diags_.note(firstUse[ix.name], "first used here");
      throw DefFailed{};
    }
    return it->second;
  };
  for (size_t k = 0; k < out.indices.size(); ++k) {
    for (size_t j = 0; j < k; ++j)
      if (out.indices[j].name == out.indices[k].name) fail(out.indices[k].loc, "index '" + out.indices[k].name + "' appears twice in the result");
    ein->outIndices.push_back(useIndex(out.indices[k], outShape->indices[k].extent, "the result"));
  }
  TypeP scalar = types::scalar(ein->scalar);
  std::function<tir::EinsumTermP(const ast::EinsumSyn &)> term = [&](const ast::EinsumSyn &s) -> tir::EinsumTermP {
    auto t = std::make_shared<tir::EinsumTerm>();
    t->loc = s.loc;
    switch (s.op) {
      case ast::EinOp::Access: {
        t->op = tir::EinsumTerm::Access;
        const Binding *b = lookup(s.tensor);
        if (!b || b->kind != Binding::Value) fail(s.loc, "unknown tensor '" + s.tensor + "' in einsum (operands are value parameters)");
        t->tensor = b->value;
        TypeP tt = zonk(b->value->type);
        std::string w;
        auto shape = tensorShape(tt, w);
        if (!shape) fail(s.loc, "'" + s.tensor + "' of type `" + types::str(tt) + "` is not a tensor: " + w);
        if (shape->indices.size() != s.indices.size())
          fail(s.loc, fmt::format("'{}' of type `{}` has {} index level{}, but is indexed with {}", s.tensor, types::str(tt),
                                  shape->indices.size(), shape->indices.size() == 1 ? "" : "s", s.indices.size()));
        if (!unify(scalar, shape->value))
          fail(s.loc, "'" + s.tensor + "' holds `" + types::str(shape->value) + "` values, but the result holds `" +
                          types::str(scalar) + "` (einsum operands must have the result's scalar type)");
        for (size_t k = 0; k < s.indices.size(); ++k) {
          for (size_t j = 0; j < k; ++j)
            if (s.indices[j].name == s.indices[k].name)
              fail(s.indices[k].loc, "index '" + s.indices[k].name + "' appears twice in one access (diagonals are not supported)");
          t->indices.push_back(useIndex(s.indices[k], shape->indices[k].extent, "'" + s.tensor + "'"));
        }
        break;
      }
      case ast::EinOp::Lit: {
        t->op = tir::EinsumTerm::Literal;
        t->literal = s.literal->op == ast::ExprOp::IntLit ? static_cast<double>(s.literal->ival) : s.literal->fval;
        if (s.literal->op == ast::ExprOp::BoolLit) fail(s.loc, "bool literals cannot appear in einsum");
        break;
      }
      case ast::EinOp::Neg:
        t->op = tir::EinsumTerm::Neg;
        t->kids = {term(*s.kids[0])};
        break;
      default:
        t->op = s.op == ast::EinOp::Add ? tir::EinsumTerm::Add : s.op == ast::EinOp::Sub ? tir::EinsumTerm::Sub
              : s.op == ast::EinOp::Mul ? tir::EinsumTerm::Mul : tir::EinsumTerm::Div;
        t->kids = {term(*s.kids[0]), term(*s.kids[1])};
        break;
    }
    return t;
  };
  ein->rhs = term(*out.rhs);
  for (auto &ix : ein->indices) ix.extent = zonk(ix.extent);
  auto r = std::make_shared<tir::Expr>();
  r->kind = tir::ExprKind::Einsum;
  r->loc = e.loc;
  r->type = rt;
  r->einsum = ein;
  return r;
}

}  // namespace spl::check
