// buffer_check.h: what tests/blas's differential tests of levels 2 and 3 share: the tolerance of
// each precision against a double-precision reference, the whole-buffer comparison (positions a
// routine may not write are expected unchanged) and the widening of a buffer to double.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <vector>

namespace blas_check {

template <typename T> constexpr double kTolerance = sizeof(T) == 4 ? 3e-6 : 1e-13;

// Compares a routine's buffer with the expected one, element by element.
template <typename T>
void expectBuffer(const std::vector<T> &got, const std::vector<double> &want, double scale, const char *what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t p = 0; p < got.size(); ++p)
    ASSERT_NEAR(double(got[p]), want[p], kTolerance<T> * scale * (1 + std::fabs(want[p])))
        << what << " at buffer position " << p;
}

template <typename T> std::vector<double> widen(const std::vector<T> &v) { return std::vector<double>(v.begin(), v.end()); }

}  // namespace blas_check
