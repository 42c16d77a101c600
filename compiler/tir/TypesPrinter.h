/// \file TypesPrinter.h: `splc --emit=types`, the dump of the type checker's result.
/// Takes:      a tir::Program (check/Checker.h) and its sources.
/// Gives:      every def's parameters and result, each call with its implicit arguments
///             resolved, each export's C signature (tir/Abi.h: those of `--index-bits` and
///             `--checked`), and the nat subtractions that were not proved non-negative. It
///             lives in tir, downstream of the checker, because it prints the ABI too.
#pragma once

#include <string>

#include "support/Source.h"
#include "tir/Tir.h"

namespace spl::tir {

std::string printTypes(const Program &p, const SourceManager &sm, int indexBits = 32, bool checked = false);

/// The type arguments an export gives its def's data parameters, "T = f32, U = i32" (empty
/// when it gives none): in --emit=types and in the generated header's comments.
std::string typeArguments(const Export &e);

}  // namespace spl::tir
