/// \file IslSupport.cpp: the isl context and text of poly/ (see IslSupport.h).
#include "poly/IslSupport.h"

#include <isl/ctx.h>
#include <isl/map.h>
#include <isl/options.h>
#include <isl/set.h>

#include <cstdlib>

#include "support/Error.h"

namespace spl::poly {

IslContext::IslContext(unsigned long maxOperations) : ctx_(isl_ctx_alloc()) {
  internal_assert(ctx_) << "cannot allocate an isl_ctx";
  isl_options_set_on_error(ctx_, ISL_ON_ERROR_CONTINUE);
  if (maxOperations) isl_ctx_set_max_operations(ctx_, maxOperations);
}

IslContext::~IslContext() { isl_ctx_free(ctx_); }

bool IslContext::quotaExceeded() const { return isl_ctx_last_error(ctx_) == isl_error_quota; }

std::string IslContext::quotaReason(const std::string &what) {
  return "isl ran out of its operations quota (" + std::to_string(kIslOperations) + ") " + what;
}

namespace {
std::string owned(char *s) {
  std::string out = s ? s : "";
  free(s);
  return out;
}
}  // namespace

std::string islText(isl_map *m) { return owned(isl_map_to_str(m)); }
std::string islText(isl_set *s) { return owned(isl_set_to_str(s)); }

}  // namespace spl::poly
