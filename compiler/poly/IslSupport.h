/// \file IslSupport.h: the isl context and text that every pass of poly/ uses.
///
/// IslContext owns one isl_ctx, freed on every path (the passes throw from inside their isl
/// work); isl's errors continue (C calls return null, the C++ bindings throw), and
/// `maxOperations` bounds the work (isl_ctx_set_max_operations; kIslOperations unless a pass
/// asks otherwise, 0 for none), as Polly bounds every isl computation: a call past the quota
/// fails like any isl error, quotaExceeded() tells it apart, and each pass then falls back (a
/// region keeps its loops, a schedule command is refused saying so, an inspector is refused
/// at its script). An isl_ctx belongs to one thread; every isl object made in it must be
/// freed before the IslContext is.
/// islText prints a map or set as isl text (isl_*_to_str gives a malloc'd string).
#pragma once

#include <string>

struct isl_ctx;
struct isl_map;
struct isl_set;

namespace spl::poly {

/// The isl operations one transformation may spend (a tile, a fusion, an inspector's layout):
/// real nests take a few thousand.
constexpr unsigned long kIslOperations = 2'000'000;

class IslContext {
 public:
  explicit IslContext(unsigned long maxOperations = kIslOperations);
  ~IslContext();
  IslContext(const IslContext &) = delete;
  IslContext &operator=(const IslContext &) = delete;
  isl_ctx *raw() const { return ctx_; }
  /// Did the last isl error come from the operations quota?
  bool quotaExceeded() const;
  /// The reason a pass gives when it falls back because of the quota.
  static std::string quotaReason(const std::string &what);

 private:
  isl_ctx *ctx_;
};

/// The text of `m` (not consumed).
std::string islText(isl_map *m);
std::string islText(isl_set *s);

}  // namespace spl::poly
