// tir's C ABI (tir/Abi.h, LANGUAGE.md section 8), computed from an export's type: parameters
// in the def's order with the implicit nats first, index pointers at --index-bits, a dependent
// pair by its nats then its data (a CSR's entries named by their roles, vals and cols), the result as output pointers, `void *stream` and `_cuda` for
// the GPU, and under --checked an `int64_t NAME_len` after each array input whose element count
// depends on run-time data.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "parse/Parser.h"
#include "support/Diagnostics.h"
#include "tir/Abi.h"
#include "check/Checker.h"

namespace spl {
namespace {

const char *kSource = R"(
type csr[n: nat, m: nat] = (offs: nats ** n..(i => (offs@(i+1) - offs@i).(f32, idx[m])));
def spmv {n: nat} {m: nat} (A: csr[n, m]) (x: m.f32) : n.f32 = einsum y[i] = A[i, j] * x[j];
def dot {n: nat} (a: n.f64) (b: n.f64) : f64 = zip(a, b) |> map((u, v) => u * v) |> reduce(+, 0.0);
export spmv as abi_spmv for cpu, cuda;
export dot as abi_dot for cpu;
)";

/// Each export of kSource by name, with its prototype under the given options.
std::map<std::string, std::string> prototypes(int indexBits, bool checked, bool cuda) {
  SourceManager sm;
  Diagnostics diags(sm);
  uint32_t file = sm.addFile("abi.spl", kSource);
  std::optional<ast::Module> module = parseFile(sm, file, diags);
  std::optional<tir::Program> program = module ? checkProgram(*module, sm, diags, CheckOptions{}) : std::nullopt;
  std::map<std::string, std::string> out;
  if (!program) {
    std::ostringstream os;
    diags.flush(os);
    ADD_FAILURE() << os.str();
    return out;
  }
  for (const tir::Export &ex : program->exports) {
    tir::Abi abi = tir::computeAbi(ex, indexBits, checked);
    out[ex.cname] = tir::prototype(ex, abi, cuda, /*sizeFn=*/false);
  }
  return out;
}

TEST(TirAbi, PrototypesFollowTheTypes) {
  auto cpu = prototypes(32, false, false);
  EXPECT_EQ(cpu["abi_spmv"],
            "int abi_spmv(int64_t n, int64_t m, const int32_t *offs, const float *A_vals, const int32_t *A_cols, const float *x, "
            "float *out)");
  // A scalar result is a pointer to one element.
  EXPECT_EQ(cpu["abi_dot"], "int abi_dot(int64_t n, const double *a, const double *b, double *out)");
  // The GPU's: `_cuda` and the stream first.
  auto cuda = prototypes(32, false, true);
  EXPECT_EQ(cuda["abi_spmv"].rfind("int abi_spmv_cuda(void *stream, int64_t n, int64_t m, ", 0), 0u) << cuda["abi_spmv"];
}

TEST(TirAbi, IndexBitsAndCheckedCounts) {
  // --index-bits=64: every index pointer widens, nothing else.
  auto wide = prototypes(64, false, false);
  EXPECT_EQ(wide["abi_spmv"],
            "int abi_spmv(int64_t n, int64_t m, const int64_t *offs, const float *A_vals, const int64_t *A_cols, const float *x, "
            "float *out)");
  // --checked: the CSR's entries (a count that depends on its offsets) are followed by the
  // element count of the caller's buffers; the dense vector's count is n, known, so it gets none.
  auto checked = prototypes(32, true, false);
  EXPECT_NE(checked["abi_spmv"].find("const int32_t *A_cols, int64_t A_len, const float *x"), std::string::npos) << checked["abi_spmv"];
  EXPECT_EQ(checked["abi_dot"], "int abi_dot(int64_t n, const double *a, const double *b, double *out)");
}

}  // namespace
}  // namespace spl
