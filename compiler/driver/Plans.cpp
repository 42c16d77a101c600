/// \file Plans.cpp: a planned export's candidates and entry points (see the header).
#include "driver/Plans.h"

#include <fmt/format.h>

#include <algorithm>

#include "parse/Parser.h"
#include "support/Error.h"

namespace spl {
namespace {

/// Blocks of 2 and 3 cover the usual FEM blocks (4 x 4 and 6 x 6 with the same fill): pwtk's
/// 6 x 6 ran as fast with either as with 6 x 6 (2026-11-28).
constexpr int64_t kPlanBlocks[] = {2, 3};
/// The widths of an SpMM plan's kernels (stdlib/spmm.spl exports each): k of Krylov blocks and
/// multi-vector products; others run the export itself.
constexpr int64_t kSpmmWidths[] = {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 24, 32, 64};
/// A BCSR SpMM kernel's widest k: 3 x 3 blocks of 16 columns spill their sums (4x slower than
/// 2 x 2 blocks in f64, 2026-11-28; stdlib/spmm.spl exports them up to 8, 2 x 2 up to 16).
int64_t maxWidthOfBlock(int64_t b) { return b >= 3 ? 8 : 16; }

/// The candidates' module for kernel `name` in `elem` (f32 or f64): stdlib spmv's CSR kernel
/// with its rows as one scalar loop of one and of two partial sums and of one with its gathers
/// prefetched (what spl_spmv_csr_short_T, spl_spmv_csr_two_sums_T and spl_spmv_csr_prefetch_T
/// export), its SELL-C-sigma
/// row kernels of both windows, its DIA kernel and its BCSR kernels (kPlanBlocks) under names
/// of the kernel's own, with the schedules stdlib gives them; for a transposed product, the
/// same candidates and stdlib's CSR kernel, for the plan of the transposed copy (run over the
/// transpose); for C = A B, stdlib spmm's kernels of each width in kSpmmWidths (CSR and BCSR).
std::string candidateModule(const std::string &name, const std::string &elem, bool transposed, bool spmm) {
  if (spmm) {
    std::string exports;
    for (int64_t w : kSpmmWidths) {
      // B and C with row strides (the runtime's spl_csr_spmm_width_*_fn): panels of a wider k.
      exports += fmt::format(
          "export spmm_csr_w_{1}(w = {2}) as {0}__csr_w{2} for cpu with B: rowmajor(ldb), C: rowmajor(ldc), result in C;\n",
          name, elem, w);
      for (int64_t b : kPlanBlocks)
        if (w <= maxWidthOfBlock(b)) exports += fmt::format("export spmm_bcsr{3}_w_{1}(w = {2}) as {0}__bcsr{3}_w{2} for cpu;\n", name, elem, w, b);
    }
    return fmt::format("// The candidates of {0}'s plan (splc, driver/Plans.cpp), C = A B: CSR and BCSR kernels of fixed widths.\n"
                       "import spmm;\n{1}",
                       name, exports);
  }
  const std::string csrOverTheCopy =
      transposed ? fmt::format("export spmv_csr(T = {1}) as {0}__csr for cpu;\n", name, elem) : std::string();
  return fmt::format(
      "// The candidates of {0}'s plan (splc, driver/Plans.cpp): CSR of short rows, of two partial sums and with gathers "
      "prefetched, SELL-C-sigma row "
      "kernels of both windows, DIA, BCSR{2}.\n"
      "import spmv;\n{3}"
      "export spmv_csr(T = {1}) as {0}__csr_short for cpu;\n"
      "schedule {0}__csr_short for cpu {{ scalar(k); }}\n"
      "export spmv_csr(T = {1}) as {0}__csr_two_sums for cpu;\n"
      "schedule {0}__csr_two_sums for cpu {{ scalar(k, 2); }}\n"
      "export spmv_csr(T = {1}) as {0}__csr_prefetch for cpu;\n"
      "schedule {0}__csr_prefetch for cpu {{ scalar(k); prefetch(k, 128); }}\n"
      "export spmv_sell_rows_{1} as {0}__sell_narrow for cpu;\n"
      "export spmv_sell_rows_wide_{1} as {0}__sell_wide for cpu;\n"
      "export spmv_dia(T = {1}) as {0}__dia for cpu;\n"
      "export spmv_bcsr2_{1} as {0}__bcsr2 for cpu;\n"
      "export spmv_bcsr3_{1} as {0}__bcsr3 for cpu;\n"
      "schedule spmv_sell_rows_{1} for cpu {{ precompute(ys); }}\n"
      "schedule spmv_sell_rows_wide_{1} for cpu {{ precompute(ys); }}\n",
      name, elem, transposed ? " and CSR, for the plan of the transposed copy of y = A^T x" : "", csrOverTheCopy);
}

int64_t tunable(const tir::Program &p, const std::string &name) {
  for (const tir::Tunable &t : p.tunables)
    if (t.name == name) return t.value;
  throw InternalError("plan: stdlib spmv has no tunable " + name);
}

}  // namespace

bool addPlanCandidates(std::vector<cin::Kernel> &kernels, std::vector<loopir::PlanEntry> &plans, PlanSources &sources,
                       const std::vector<std::string> &exportNames, SourceManager &sm, Diagnostics &diags,
                       const CheckOptions &checkOptions, const LowerCpuExport &lower) {
  std::vector<const cin::Kernel *> planned;
  for (const cin::Kernel &k : kernels)
    if (k.planned) planned.push_back(&k);
  std::vector<cin::Kernel> added;
  for (const cin::Kernel *k : planned) {
    // NAME_plan and NAME_run are the object's too: no export may have those names.
    for (const char *suffix : {"_plan", "_run"})
      if (std::count(exportNames.begin(), exportNames.end(), k->name + suffix)) {
        diags.error(k->loc, fmt::format("the plan of '{0}' defines '{0}{1}', which another export is named", k->name, suffix));
        return false;
      }
    const bool f64 = k->params.back().abi.elem == ScalarKind::F64;
    const std::string elem = f64 ? "f64" : "f32";
    // The module stands in the stdlib's folder, so that `import spmv` finds stdlib's whatever
    // the user's folder holds. Its tunables keep their defaults: -D names the main file's.
    std::string path = checkOptions.stdlibDir + "/<plan of " + k->name + ">.spl";
    uint32_t file = sm.addFile(path, candidateModule(k->name, elem, k->planTransposed, k->planSpmm), /*generated=*/true);
    std::optional<ast::Module> module = parseFile(sm, file, diags);
    if (!module) throw InternalError("plan: the candidates' module of " + k->name + " does not parse");
    sources.modules.push_back(std::make_unique<ast::Module>(std::move(*module)));
    CheckOptions own = checkOptions;
    own.defines.clear();
    std::optional<tir::Program> program = checkProgram(*sources.modules.back(), sm, diags, own);
    if (!program) return false;  // a stdlib that does not check (diags says where)
    sources.programs.push_back(std::make_unique<tir::Program>(std::move(*program)));
    const tir::Program &p = *sources.programs.back();
    for (const tir::Export &ex : p.exports) {
      cin::Kernel c;
      if (!lower(p, ex, c)) return false;
      c.internal = true;
      added.push_back(std::move(c));
    }
    loopir::PlanEntry e;
    e.name = k->name;
    e.f64 = f64;
    e.csr = k->name;
    e.paramOf = k->planParams;
    if (k->planSpmm) {
      e.spmm = true;
      for (int64_t w : kSpmmWidths) {
        loopir::PlanEntry::Width width;
        width.width = w;
        width.csr = fmt::format("{}__csr_w{}", k->name, w);
        for (int64_t b : kPlanBlocks)
          if (w <= maxWidthOfBlock(b)) width.bcsr.push_back({b, fmt::format("{}__bcsr{}_w{}", k->name, b, w)});
        e.widths.push_back(width);
      }
    } else {
      if (k->planTransposed) {
        e.transposed = true;
        e.gather = k->name + "__csr";
      }
      e.csrShort = k->name + "__csr_short";
      e.csrTwoSums = k->name + "__csr_two_sums";
      e.csrPrefetch = k->name + "__csr_prefetch";
      e.sellNarrow = k->name + "__sell_narrow";
      e.sellWide = k->name + "__sell_wide";
      e.lanes = tunable(p, f64 ? "SELL_LANES_F64" : "SELL_LANES_F32");
      e.narrowRows = tunable(p, "SELL_WINDOW") * e.lanes;
      e.wideRows = tunable(p, "SELL_WINDOW_WIDE") * e.lanes;
      e.dia = k->name + "__dia";
      for (int64_t b : kPlanBlocks) e.bcsr.push_back({b, fmt::format("{}__bcsr{}", k->name, b)});
    }
    plans.push_back(e);
  }
  for (cin::Kernel &c : added) kernels.push_back(std::move(c));
  return true;
}

}  // namespace spl
