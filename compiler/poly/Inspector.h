/// \file Inspector.h: the compact and compact-and-pad inspectors of Venkat, Hall and Strout
/// (PLDI'15), derived with isl from a conversion script.
///
/// A conversion `def f (A: csr[n, m]) : R = inspect(A)` gets its script from the export's
/// schedule block. The script transforms the loop nest of the source, then compacts one loop:
///   make_dense(i, j)          the rows i and the compressed positions k become the dense
///                             space { [i, j] : 0 <= i < n and 0 <= j < m }, j = crd@k (an
///                             uninterpreted function: the one non-affine step);
///   skew(d, e)                e (affine in the loops) replaces the innermost loop it mentions;
///   reorder(a, b, ...)        permutes the loops;
///   tile(a, b, sa, sb)        adjacent loops a, b -> a_tile, b_tile, a, b (a, b now within
///                             the tile);
///   compact(x) or compact_and_pad(x)   the last command: loop x keeps only the values that
///                             hold entries; loops outside x index the result's outer levels,
///                             loops inside it are padded to their full extent (dense blocks).
///                             compact gives ragged slots (offsets per outer point),
///                             compact_and_pad pads every outer point to the longest.
/// CSR -> ELL is `make_dense(i, j); compact_and_pad(j)`, CSR -> DIA `make_dense(i, j);
/// skew(d, j - i); reorder(d, i); compact_and_pad(d)`, CSR -> BCSR `make_dense(i, j);
/// tile(i, j, b, c); compact(j_tile)`.
///
/// Takes:      the script, the source's sizes n and m (Nats) and the variables that stand for
///             the source's row and column in the derived expressions.
/// Gives:      the layout (InspectorLayout): every loop as a Nat of (row, column) read back from
///             isl's AST, the bounds of each loop over the matrix (isl_set_dim_min/max of the
///             image of the dense space), and which loop is compacted. isl proves the
///             transformation injective on the dense space, so two entries can share a slot only
///             when the source stores one (row, column) twice: the run-time injectivity check
///             the inspector keeps (cin/LowerInspect.cpp, which gets these through
///             cin::InspectorPlanner: cin does not include poly).
///             generateInspectorLoops builds the inspector's phase loops from an isl schedule
///             (rows grouped by their outer point, phases in order within it) through
///             isl_ast_build and reads the AST back into CIN.
/// Fails:      CompileError at the offending command: an unknown or malformed command, a
///             transformation isl cannot read (not affine) or does not prove injective, more
///             than one outer loop, an outer loop that depends on the column.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ast/Ast.h"
#include "cin/Cin.h"
#include "cin/InspectorPlan.h"
#include "types/Nat.h"

namespace spl::poly {

using cin::InspectorLayout;
using cin::InspectorPhase;

InspectorLayout deriveInspectorLayout(const std::vector<tir::ScriptCommand> &script, SourceLoc where, const Nat &n,
                                      const Nat &m, NatVarId row, NatVarId column);

cin::StmtP generateInspectorLoops(const InspectorLayout &layout, const std::vector<InspectorPhase> &phases, const Nat &n,
                                  const Nat &m, const std::string &rowName, SourceLoc loc);

/// The two above as the lowering's planner (cin::LowerOptions::inspector).
class IslInspectorPlanner : public cin::InspectorPlanner {
 public:
  InspectorLayout layout(const std::vector<tir::ScriptCommand> &script, SourceLoc where, const Nat &n, const Nat &m, NatVarId row,
                         NatVarId column) const override {
    return deriveInspectorLayout(script, where, n, m, row, column);
  }
  cin::StmtP loops(const InspectorLayout &layout, const std::vector<InspectorPhase> &phases, const Nat &n, const Nat &m,
                   const std::string &rowName, SourceLoc loc) const override {
    return generateInspectorLoops(layout, phases, n, m, rowName, loc);
  }
};

}  // namespace spl::poly
