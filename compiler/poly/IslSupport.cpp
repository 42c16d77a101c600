/// \file IslSupport.cpp: the isl context of poly/ (see IslSupport.h).
#include "poly/IslSupport.h"

#include <isl/ctx.h>
#include <isl/options.h>

#include <sstream>

#include "support/Error.h"

namespace spl::poly {

IslContext::IslContext(unsigned long maxOperations) : ctx_(isl_ctx_alloc()) {
  internal_assert(ctx_) << "cannot allocate an isl_ctx";
  isl_options_set_on_error(ctx_, ISL_ON_ERROR_CONTINUE);
  if (maxOperations) isl_ctx_set_max_operations(ctx_, maxOperations);
}

IslContext::~IslContext() { isl_ctx_free(ctx_); }

bool IslContext::quotaExceeded() const { return isl_ctx_last_error(ctx_) == isl_error_quota; }

bool IslContext::quotaExceeded(const isl::exception &e) const {
  return dynamic_cast<const isl::exception_quota *>(&e) != nullptr || quotaExceeded();
}

void IslContext::resetOperations() { isl_ctx_reset_operations(ctx_); }

std::string IslContext::quotaReason(const std::string &what) {
  return "isl ran out of its operations quota (" + std::to_string(kIslOperations) + ") " + what;
}

namespace {
template <class T>
std::string printed(const T &x) {
  std::ostringstream out;
  out << x;
  return out.str();
}
}  // namespace

std::string islText(const isl::map &m) { return printed(m); }
std::string islText(const isl::set &s) { return printed(s); }

}  // namespace spl::poly
