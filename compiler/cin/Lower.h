/// \file Lower.h: typed IR -> concrete index notation, one kernel per export and target.
/// Takes:      a checked tir::Export and its C ABI.
/// Gives:      a cin::Kernel: parameters bound to tensors, and a body of foralls, locals and
///             assignments that computes the export's result into its output tensors (or, for
///             NAME_size, the output sizes).
/// Assumes:    the TIR invariants (tir/Tir.h); data parameters are instantiated by the export.
/// Guarantees: user defs are inlined; arrays are fused (a map is computed where its elements
///             are consumed) except where a sequential producer (scan, which) or a reused value
///             needs a temporary; independent loops are marked Parallel (the schedule decides
///             which ones run in parallel), `reduce` loops Reduction, everything else Serial;
///             access indices are Nats over kernel variables only (loop variables, nat
///             parameters, locals as Value atoms, tensors as Lookup arrays).
/// Fails:      CompileError for programs the lowering cannot express yet (reported as "not
///             supported yet" with the source location).
#pragma once

#include <set>
#include <string>

#include "cin/Cin.h"
#include "cin/InspectorPlan.h"
#include "tir/Abi.h"
#include "tir/Tir.h"

namespace spl::cin {

struct LowerOptions {
  bool cuda = false;          // lowering for the cuda target
  bool sizeFunction = false;  // lower NAME_size instead of NAME
  int indexBits = 32;
  bool checked = false;       // --checked: validate inputs
  /// Let-bound arrays to compute into a temporary where they are bound instead of fusing them
  /// into their uses (a schedule's `precompute(name)`, taco's workspaces).
  std::set<std::string> precompute;
  /// The schedule block of an export whose body is `inspect(A)`: its commands are the
  /// conversion's script (poly/Inspector.h), consumed by the lowering.
  const tir::Schedule *inspectScript = nullptr;
  /// How the script becomes a layout and loops (poly::IslInspectorPlanner; set with inspectScript).
  const InspectorPlanner *inspector = nullptr;
};

/// Is the export a conversion derived by an inspector (its def's body is `inspect(A)`)?
bool isInspector(const tir::Export &ex);

Kernel lowerExport(const tir::Export &ex, const tir::Abi &abi, const LowerOptions &opts);

}  // namespace spl::cin
