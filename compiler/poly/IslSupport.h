/// \file IslSupport.h: the isl context that every pass of poly/ uses.
///
/// IslContext owns one isl_ctx, freed on every path (the passes throw from inside their isl
/// work); the passes use isl through its C++ bindings (isl/cpp.h: objects own their isl
/// pointers, an isl error throws isl::exception), and `maxOperations` bounds the work
/// (isl_ctx_set_max_operations; kIslOperations unless a pass asks otherwise, 0 for none), as
/// Polly bounds every isl computation: a call past the quota throws isl::exception_quota (a C
/// call the bindings lack returns null, and isl::manage then throws; quotaExceeded(e) tells
/// both apart from other errors), and each pass then falls back (a region
/// keeps its loops, a schedule command is refused saying so, an inspector is refused at its
/// script). An isl_ctx belongs to one thread; every isl object made in it must be destroyed
/// before the IslContext is. The options the bindings do not cover (tiling's) are set through
/// raw().
/// islText prints a map or set as isl text.
#pragma once

#include <isl/cpp.h>

#include <string>

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
  isl::ctx ctx() const { return isl::ctx(ctx_); }
  isl_ctx *raw() const { return ctx_; }
  /// Did the last isl error of a C call come from the operations quota?
  bool quotaExceeded() const;
  /// Did `e` come from the operations quota (thrown by the bindings, or after a C call)?
  bool quotaExceeded(const isl::exception &e) const;
  /// Spend the quota anew (after a fallback, for the next piece of work).
  void resetOperations();
  /// The reason a pass gives when it falls back because of the quota.
  static std::string quotaReason(const std::string &what);

 private:
  isl_ctx *ctx_;
};

std::string islText(const isl::map &m);
std::string islText(const isl::set &s);

}  // namespace spl::poly
