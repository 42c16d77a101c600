// matrix_test_support.h: helpers shared by the splmatrix tests: where the shared matrices are,
// an owning wrapper for spl_csr, temporary files for hand-made inputs, and entry lookup. Kept
// independent of the library's internals so that the tests check behaviour, not implementation.
#pragma once

#include "spl_matrix.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#ifndef SPL_MATRICES_DIR
#error "SPL_MATRICES_DIR must name the folder that holds the shared test matrices"
#endif

namespace spl_matrix_test {

inline std::string shared_matrix(const std::string &name) {
  return std::string(SPL_MATRICES_DIR) + "/" + name;
}

// Owns one spl_csr; the library's free function makes a zeroed or failed matrix safe to drop.
struct Csr {
  spl_csr m{};
  Csr() = default;
  Csr(const Csr &) = delete;
  Csr &operator=(const Csr &) = delete;
  ~Csr() { spl_csr_free(&m); }
};

struct ReadOutcome {
  int status;
  std::string message;
};

inline ReadOutcome read_matrix(const std::string &path, spl_csr *out) {
  char message[512] = "(untouched)";
  int status = spl_read_matrix(path.c_str(), out, message, sizeof message);
  return {status, message};
}

// A folder of its own per test process (ctest may run the discovered tests in parallel),
// created on first use and removed when the process exits.
class ScratchFolder {
public:
  ScratchFolder() {
    std::random_device entropy;
    path_ = std::filesystem::temp_directory_path() /
            ("splmatrix-tests-" + std::to_string(entropy()) + std::to_string(entropy()));
    std::filesystem::create_directories(path_);
  }
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path &path() const { return path_; }

private:
  std::filesystem::path path_;
};

inline const std::filesystem::path &scratch_folder() {
  static const ScratchFolder folder;
  return folder.path();
}

// Writes bytes to a file named `name` (the name shows in error messages) and returns its path.
inline std::string write_temp_file(const std::string &name, const std::string &bytes) {
  auto path = scratch_folder() / name;
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.close();
  EXPECT_TRUE(file.good()) << "could not write " << path;
  return path.string();
}

inline std::string read_text_file(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

// The stored value of A(i, j) (0-based), found by scanning row i; `stored` tells whether the
// entry is part of the structure at all.
inline double entry(const spl_csr &m, int64_t i, int64_t j, bool *stored = nullptr) {
  if (stored)
    *stored = false;
  for (int64_t k = m.offs[i]; k < m.offs[i + 1]; ++k) {
    if (m.cols_idx[k] == j) {
      if (stored)
        *stored = true;
      return m.vals[k];
    }
  }
  return 0.0;
}

inline void expect_valid(const spl_csr &m) {
  char message[256] = "";
  EXPECT_EQ(spl_csr_check(&m, message, sizeof message), SPL_MATRIX_OK) << message;
}

inline std::vector<double> random_x(int64_t n, uint64_t seed) {
  std::vector<double> x(static_cast<size_t>(n));
  spl_random_vector(seed, n, x.data());
  return x;
}

} // namespace spl_matrix_test
