// A C++ user program of an installed SPL: y = A x for a 3 x 3 CSR matrix.
#include <cstdio>
#include <vector>

#include "kernels.h"

int main() {
  const std::vector<int32_t> offs{0, 2, 4, 5}, cols{0, 2, 1, 2, 0};
  const std::vector<float> vals{1, 2, 3, 4, 1}, x{1, 1, 2};
  std::vector<float> y(3);
  if (int rc = app_spmv(3, 3, offs.data(), vals.data(), cols.data(), x.data(), y.data()); rc != SPL_OK) {
    std::printf("error: %s\n", spl_error_string(rc));
    return 1;
  }
  std::printf("y = %g %g %g\n", y[0], y[1], y[2]);
  return 0;
}
