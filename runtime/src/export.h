/* export.h: includes the public runtime header with default symbol visibility.
 *
 * The runtime builds with hidden visibility so that its internal C++ helpers stay out of the
 * dynamic symbol table of libsplrt.so and of the programs that link libsplrt.a into their own
 * shared objects. The spl_* entry points must stay visible, so every source file includes the
 * public header through this one, which wraps it in a default-visibility region. Include it
 * first in each source file, before anything that might include spl_runtime.h directly.
 */
#ifndef SPL_RT_EXPORT_H
#define SPL_RT_EXPORT_H

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif
#include "spl_runtime.h"
#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif /* SPL_RT_EXPORT_H */
