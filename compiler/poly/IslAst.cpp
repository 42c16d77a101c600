/// \file IslAst.cpp: isl AST expressions as Nats (see IslAst.h).
#include "poly/IslAst.h"

#include <isl/ast.h>
#include <isl/id.h>
#include <isl/val.h>

#include <vector>

namespace spl::poly {

std::optional<Nat> natOfAstExpr(isl_ast_expr *e, const std::map<std::string, Nat> &ids) {
  switch (isl_ast_expr_get_type(e)) {
    case isl_ast_expr_int: {
      isl_val *v = isl_ast_expr_get_val(e);
      long x = isl_val_get_num_si(v);
      isl_val_free(v);
      return Nat(static_cast<int64_t>(x));
    }
    case isl_ast_expr_id: {
      isl_id *id = isl_ast_expr_get_id(e);
      std::string name = isl_id_get_name(id);
      isl_id_free(id);
      if (auto it = ids.find(name); it != ids.end()) return it->second;
      return std::nullopt;
    }
    case isl_ast_expr_op: {
      int n = isl_ast_expr_get_op_n_arg(e);
      std::vector<Nat> args;
      for (int k = 0; k < n; ++k) {
        isl_ast_expr *a = isl_ast_expr_get_op_arg(e, k);
        std::optional<Nat> x = natOfAstExpr(a, ids);
        isl_ast_expr_free(a);
        if (!x) return std::nullopt;
        args.push_back(*x);
      }
      auto constDivisor = [&]() -> std::optional<int64_t> {
        auto c = args[1].asConst();
        if (!c || *c < 1) return std::nullopt;
        return c;
      };
      switch (isl_ast_expr_get_op_type(e)) {
        case isl_ast_expr_op_add: return args[0] + args[1];
        case isl_ast_expr_op_sub: return args[0] - args[1];
        case isl_ast_expr_op_mul: return args[0] * args[1];
        case isl_ast_expr_op_minus: return -args[0];
        case isl_ast_expr_op_min: {
          Nat m = args[0];
          for (size_t k = 1; k < args.size(); ++k) m = Nat::min(m, args[k]);
          return m;
        }
        case isl_ast_expr_op_max: {
          Nat m = args[0];
          for (size_t k = 1; k < args.size(); ++k) m = Nat::max(m, args[k]);
          return m;
        }
        case isl_ast_expr_op_fdiv_q:
        case isl_ast_expr_op_pdiv_q:
        case isl_ast_expr_op_div: {
          auto c = constDivisor();
          if (!c) return std::nullopt;
          return Nat::div(args[0], *c);
        }
        case isl_ast_expr_op_pdiv_r:
        case isl_ast_expr_op_zdiv_r: {
          // isl emits these only where the dividend is known non-negative (pdiv_r) or where
          // only a zero test follows (zdiv_r); the Nat remainder is the floor remainder.
          auto c = constDivisor();
          if (!c) return std::nullopt;
          return Nat::mod(args[0], *c);
        }
        default: return std::nullopt;
      }
    }
    default: return std::nullopt;
  }
}

}  // namespace spl::poly
