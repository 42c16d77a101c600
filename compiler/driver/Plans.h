/// \file Plans.h: the plans of a program's exports (schedule command plan(), docs/plans.md).
/// Takes:      the main file's kernels, lowered and scheduled, some marked `planned` by their
///             schedule's plan() (poly/UserSchedule, which recognised a CSR SpMV in them).
/// Gives:      for each planned kernel NAME, the candidates its plan chooses among at run time,
///             internal to the object: stdlib spmv's SELL-C-sigma row kernels of both windows
///             and its DIA kernel in the export's element type (for y = A^T x, its CSR kernel,
///             which the runtime runs over the transpose), checked and lowered from a module
///             written here (`import spmv; export spmv_sell_rows_f64 as NAME__sell_narrow ...`,
///             with their precompute schedules); and a loopir::PlanEntry, which codegen turns
///             into NAME_plan and NAME_run.
/// Assumes:    a planned kernel has the C parameters of the runtime's CSR kernel type
///             (cin/SpmvPattern.h), so the plan calls it as it is.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "ast/Ast.h"
#include "check/Checker.h"
#include "cin/Cin.h"
#include "loopir/LoopIr.h"
#include "support/Diagnostics.h"
#include "tir/Tir.h"

namespace spl {

/// What the candidate kernels were made from (their TIR refers to it): kept until codegen.
struct PlanSources {
  std::vector<std::unique_ptr<ast::Module>> modules;
  std::vector<std::unique_ptr<tir::Program>> programs;
};

/// Lowers and schedules one export of a program for the CPU (the driver's own steps).
using LowerCpuExport = std::function<bool(const tir::Program &, const tir::Export &, cin::Kernel &)>;

/// Appends the candidates of every planned kernel to `kernels` and its entry to `plans`. False
/// (with diagnostics) when a name the plan needs is taken or the candidates do not compile.
bool addPlanCandidates(std::vector<cin::Kernel> &kernels, std::vector<loopir::PlanEntry> &plans, PlanSources &sources,
                       const std::vector<std::string> &exportNames, SourceManager &sm, Diagnostics &diags,
                       const CheckOptions &checkOptions, const LowerCpuExport &lower);

}  // namespace spl
