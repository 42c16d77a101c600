// gpu_support.h: helpers of the GPU execution tests: device copies of host vectors and back.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "spl_runtime.h"

namespace spl_gpu_test {

/// A device copy of a host vector (at least one byte); free it with spl_cuda_free.
template <typename T>
void *upload(const std::vector<T> &host) {
  void *p = nullptr;
  EXPECT_EQ(spl_cuda_alloc(&p, std::max<size_t>(1, host.size() * sizeof(T)), nullptr), SPL_OK);
  if (!host.empty()) EXPECT_EQ(spl_cuda_memcpy(p, host.data(), host.size() * sizeof(T), 0, nullptr), SPL_OK);
  return p;
}

/// The first n elements of device memory p.
template <typename T>
std::vector<T> download(const void *p, size_t n) {
  std::vector<T> out(n);
  if (n) EXPECT_EQ(spl_cuda_memcpy(out.data(), p, n * sizeof(T), 1, nullptr), SPL_OK);
  return out;
}

/// A device buffer holding a copy of host data, freed with the object.
class DeviceBuffer {
 public:
  DeviceBuffer(const void *host, size_t bytes) : bytes_(bytes) {
    EXPECT_EQ(spl_cuda_alloc(&ptr_, std::max<size_t>(1, bytes), nullptr), SPL_OK) << spl_cuda_last_error();
    if (bytes != 0 && ptr_ != nullptr)
      EXPECT_EQ(spl_cuda_memcpy(ptr_, host, bytes, 0, nullptr), SPL_OK) << spl_cuda_last_error();
  }
  template <typename T>
  explicit DeviceBuffer(const std::vector<T> &host) : DeviceBuffer(host.data(), host.size() * sizeof(T)) {}
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() { spl_cuda_free(ptr_, nullptr); }
  template <typename T>
  T *as() const {
    return static_cast<T *>(ptr_);
  }
  void *get() const { return ptr_; }
  /// The first n elements (n * sizeof(T) must not exceed the buffer).
  template <typename T>
  std::vector<T> download(size_t n) const {
    EXPECT_LE(n * sizeof(T), std::max<size_t>(1, bytes_));
    return spl_gpu_test::download<T>(ptr_, n);
  }

 private:
  void *ptr_ = nullptr;
  size_t bytes_;
};

/// The largest difference between got and want, relative to want's largest magnitude (or 1).
inline double maxRel(const std::vector<float> &got, const std::vector<float> &want) {
  double scale = 1, err = 0;
  for (float w : want) scale = std::max(scale, static_cast<double>(std::fabs(w)));
  for (size_t i = 0; i < want.size(); ++i) err = std::max(err, static_cast<double>(std::fabs(got[i] - want[i])));
  return err / scale;
}

}  // namespace spl_gpu_test
