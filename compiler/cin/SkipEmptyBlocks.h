/// \file SkipEmptyBlocks.h: a block of a result whose stores all fall outside the elements the
/// kernel writes is not computed (syrk's blocks of C across the diagonal from its triangle).
/// Takes:      a scheduled kernel whose results are written (in place or not: cin/InPlace.h
///             has run), where a loop T (a tile loop over blocks) has as its body the
///             temporaries of one block (`where S { ... }`) and statements that write only
///             those temporaries, then one finishing nest that reads them and writes the
///             results: `forall x in [a0, a1) { forall y in [lo(x), hi(x)) ... }`, x's loop
///             possibly choosing between such y loops by a test free of x (uplo).
/// Gives:      T's body guarded by the test that the finishing nest runs at least once: the
///             other statements only prepare what it reads, so a block it skips whole is
///             skipped whole. The test is exact where lo(x) - hi(x) is monotone in x (each of
///             lo and hi a sum of terms, min and max of terms, whose coefficients of x all
///             have one sign, the two signs opposite or one of them absent: a triangle's
///             bounds): the nest runs iff a0 < a1 and y's range is not empty at x = a0 or at
///             x = a1 - 1. Where no y loop's bounds read x (a rectangle: gemm's blocks), or
///             anywhere else, the kernel is left as it is. Inside such a block, register tiles
///             (the body of a loop among T's statements that touches one box of the block's
///             sums, boxes disjoint from tile to tile: gemm's second tile level) get the same
///             test cut to their box, so that a tile wholly across the diagonal is skipped too
///             (the .cpp's TileSkipper says what it checks). dsyrk L N 1000 on a 2-core AMD
///             EPYC Zen 3, paired against the build before (4 x 12 tiles in blocks of 256 x
///             252): 1.22x faster on one thread, 1.14x on two.
#pragma once

#include "cin/Cin.h"

namespace spl::cin {

void skipEmptyBlocks(Kernel &k);

}  // namespace spl::cin
