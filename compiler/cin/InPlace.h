/// \file InPlace.h: a result written into its inputs (`export f as g with result in y`).
/// Takes:      a lowered and scheduled kernel whose Kernel::resultInto maps leaves of its result
///             tensor (which has no parameter) to array inputs of the same shape.
/// Gives:      the kernel writing those inputs instead, with the same results as the
///             functional program, which reads every input as it was at the call: every read
///             of such an input happens before the element it reads is overwritten. Where that
///             cannot be shown, the result tensor becomes a temporary that the kernel writes,
///             and loops at the end copy it into the inputs (Kernel::inPlaceStaged says why).
/// What is shown, per leaf L written into input P: all writes of L are at one index vector I
/// whose entries are variables of loops around them, one loop each; the innermost of those
/// loops is the owner, and every other loop around the owner partitions the elements (the
/// range of an index loop inside it moves past itself from one iteration to the next: a tile
/// loop over its point loop), so iterations write distinct elements; every read of P in the
/// statement nest that writes L reads P[I] inside the owner, where it is read once into a local
/// at the top of the loop body, before anything is written; (a packed result, one index e + v:
/// the owner is v's loop, and the run [e + lo, e + hi) it writes must start, in the next
/// iteration of the one loop around it, at or past this one's end: spr's triangle column by
/// column); statements of the kernel before that
/// nest may read P anywhere (nothing is written yet), statements after it may not. Split loops
/// (an index 4 io + ii, not a loop variable) are staged.
/// Before all that, a result that starts as a copy of P (zeroed, then P added over every
/// element, or P copied; after that P unread: `einsum z[i] = y[i] + S[i]`, S scattered into z)
/// is P from the start: the zeroing and the copy are dropped and the rest updates P itself.
#pragma once

#include "cin/Cin.h"

namespace spl::cin {

void writeResultInPlace(Kernel &k);

}  // namespace spl::cin
