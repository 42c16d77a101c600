/* error.cpp: spl_error_string, the text for each SPL_* status code.
 *
 * Messages are static strings so the function can be called from anywhere (signal handlers,
 * after a failed allocation) and never returns NULL. Codes the runtime does not know, such as
 * ones from a newer splc, get a generic message instead of a crash.
 */
#include "export.h"

const char *spl_error_string(int code) {
  switch (code) {
  case SPL_OK:
    return "SPL_OK: success";
  case SPL_ERR_BAD_INPUT:
    return "SPL_ERR_BAD_INPUT: an argument is invalid (negative size, bad offsets or index out "
           "of range)";
  case SPL_ERR_ALLOC:
    return "SPL_ERR_ALLOC: a temporary buffer could not be allocated";
  case SPL_ERR_CUDA:
    return "SPL_ERR_CUDA: the CUDA driver is missing or reported an error (see "
           "spl_cuda_last_error)";
  case SPL_ERR_UNSUPPORTED:
    return "SPL_ERR_UNSUPPORTED: the operation is not supported on this machine";
  case SPL_ERR_INTERNAL:
    return "SPL_ERR_INTERNAL: a broken invariant inside the SPL runtime";
  }
  return "SPL_ERR_UNKNOWN: unknown SPL error code";
}
