/// \file IslSupport.h: the isl context and text that every pass of poly/ uses.
///
/// IslContext owns one isl_ctx, freed on every path (the passes throw from inside their isl
/// work); isl's errors continue (C calls return null, the C++ bindings throw), and a positive
/// `maxOperations` bounds the work (isl_ctx_set_max_operations). An isl_ctx belongs to one
/// thread; every isl object made in it must be freed before the IslContext is.
/// islText prints a map or set as isl text (isl_*_to_str gives a malloc'd string).
#pragma once

#include <string>

struct isl_ctx;
struct isl_map;
struct isl_set;

namespace spl::poly {

class IslContext {
 public:
  explicit IslContext(unsigned long maxOperations = 0);
  ~IslContext();
  IslContext(const IslContext &) = delete;
  IslContext &operator=(const IslContext &) = delete;
  isl_ctx *raw() const { return ctx_; }

 private:
  isl_ctx *ctx_;
};

/// The text of `m` (not consumed).
std::string islText(isl_map *m);
std::string islText(isl_set *s);

}  // namespace spl::poly
