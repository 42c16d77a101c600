/// \file InspectorPlan.h: what the lowering of an `inspect(A)` export needs from the
/// polyhedral stage, as data and an interface (cin never includes poly: poly/Inspector.h
/// implements InspectorPlanner, and the driver hands it to the lowering in LowerOptions).
/// Takes:      nothing (declarations only).
/// Gives:      the layout a conversion script derives (InspectorLayout), the inspector's phases
///             (InspectorPhase) and the planner that derives the one and builds the loops of the
///             other (see poly/Inspector.h for the scripts and what isl proves).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ast/Ast.h"
#include "cin/Cin.h"
#include "tir/ScheduleCommand.h"
#include "types/Nat.h"

namespace spl::cin {

struct InspectorLayout {
  std::vector<std::string> dims;  // the transformed loops, outermost first
  std::vector<Nat> dimOf;         // each loop as a Nat of the source's row and column
  NatVarId row, column;           // the source's row and column in dimOf
  std::vector<Nat> lo, hi;        // each loop's bounds over the matrix, inclusive (n, m >= 1)
  size_t compacted = 0;           // loops before it are outer, after it padded
  bool pad = false;               // compact_and_pad
  std::string mapText;            // the transformation as an isl map (for messages and docs)
  SourceLoc compactLoc;
};

/// One statement of the inspector: it runs per row, per outer point, or once, in pass `pass`
/// and at position `order` among the statements of its pass (within one outer point).
struct InspectorPhase {
  enum Domain { PerRow, PerOuter, Once } domain = PerRow;
  int pass = 0;
  int order = 0;
  std::function<StmtP(const Nat &index)> body;  // the row or the outer point (Once: 0)
};

class InspectorPlanner {
 public:
  virtual ~InspectorPlanner() = default;
  /// The layout of the script's conversion of an n x m source whose row and column are `row`
  /// and `column` in the derived expressions (CompileError at a command that does not fit).
  virtual InspectorLayout layout(const std::vector<tir::ScriptCommand> &script, SourceLoc where, const Nat &n, const Nat &m,
                                 NatVarId row, NatVarId column) const = 0;
  /// The phases' statements in their loops (rows grouped by outer point, passes in order).
  virtual StmtP loops(const InspectorLayout &layout, const std::vector<InspectorPhase> &phases, const Nat &n, const Nat &m,
                      const std::string &rowName, SourceLoc loc) const = 0;
};

}  // namespace spl::cin
