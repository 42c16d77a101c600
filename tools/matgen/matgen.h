/// \file matgen.h: seeded, deterministic generators of sparse matrices with a given structure
/// class (library splmatgen, used by the spl-matgen CLI, its tests and the benchmarks).
///
/// Takes:      an Options value naming a Kind and its sizes (rows, cols, a target number of
///             nonzeros or a degree or a density, a band or block size, R-MAT parameters).
/// Gives:      an spl_csr (tools/matrix/spl_matrix.h) that spl_csr_check accepts, with sorted,
///             unique column indices in every row; free it with spl_csr_free.
/// Guarantees: the same Options (seed included) give the same matrix on every machine,
///             compiler and optimisation level: every random decision is made in integer
///             arithmetic from splitmix64 (spl_splitmix64_next), and floating-point is used only
///             for the R-MAT quadrant choice and the off-band chance, whose comparisons of
///             exactly representable doubles are exact under IEEE 754 (a power law's weights
///             are integers: its exponent is an integer).
/// Fails:      returns false with a message (bad sizes, a target the structure cannot hold,
///             a dimension above SPL_MATRIX_MAX_DIM).
///
/// Values: by default every stored value is a nonzero multiple of 2^-8 in [-1, 1), exactly
/// representable in float, so f32 and f64 kernels multiply the same matrix and the Matrix
/// Market text stays short. Stencils hold the Laplacian (the stencil's neighbour count on the
/// diagonal, -1 off it). Values::Ones stores 1 everywhere (graphs as pattern matrices).
#ifndef SPL_MATGEN_H
#define SPL_MATGEN_H

#include "spl_matrix.h"

#include <cstdint>
#include <functional>
#include <string>

namespace splmatgen {

enum class Kind {
  Uniform,     ///< entries uniform over rows x cols
  Banded,      ///< diagonal plus entries within |i - j| <= bandwidth (a fraction offband anywhere)
  Stencil2D5,  ///< 2-D 5-point Laplacian on an nx x ny grid
  Stencil3D7,  ///< 3-D 7-point Laplacian on an nx x ny x nz grid
  Stencil3D27, ///< 3-D 27-point stencil on an nx x ny x nz grid
  Blocks,      ///< dense block x block blocks: the diagonal blocks plus blocks near the diagonal
  Dense,       ///< every entry stored
  RMat,        ///< R-MAT / Kronecker graph (Graph500 parameters a=0.57, b=0.19, c=0.19)
  BarabasiAlbert, ///< undirected preferential-attachment graph (symmetric, no self loops)
  DenseRow,    ///< uniform, plus one row holding every column
  EmptyRows,   ///< a fraction of the rows empty, the others uniform with at least one entry
  RowVector,   ///< 1 x N
  ColVector,   ///< N x 1
  Empty,       ///< rows x cols with nnz = 0
  VariedRows   ///< banded, each row's length drawn from a distribution (rowDist, min/maxRowLength)
};

/// How VariedRows draws each row's length L in [minRowLength, maxRowLength]: Uniform, or
/// PowerLaw, P(L = min + k - 1) proportional to 1 / k^exponent (k >= 1: most rows short, a
/// tail of long ones).
enum class RowDist { Uniform, PowerLaw };

enum class Values { Default, Random, Ones, Laplacian };

struct Options {
  Kind kind = Kind::Uniform;
  int64_t rows = -1;     ///< -1: not given
  int64_t cols = -1;     ///< -1: same as rows (1 for ColVector)
  int64_t nnz = -1;      ///< target number of stored entries; -1: from degree or density
  double degree = -1;    ///< average entries per row (BarabasiAlbert: edges per new vertex)
  double density = -1;   ///< nnz / (rows * cols)
  int64_t nx = -1, ny = -1, nz = -1; ///< stencil grid; -1: chosen from rows (near-square/cube)
  int64_t bandwidth = -1; ///< Banded/Blocks: the largest |i - j|; -1: 2 * degree (Blocks: in blocks)
  double offband = 0;     ///< Banded/Blocks: fraction of entries placed uniformly instead
  int64_t block = 4;      ///< Blocks: block size
  double a = 0.57, b = 0.19, c = 0.19; ///< RMat quadrant probabilities (d = 1 - a - b - c)
  bool symmetric = false; ///< RMat: store (j, i) with every (i, j)
  bool permute = false;   ///< RMat: relabel vertices by a random permutation (as Graph500 does)
  double emptyFraction = 0.9; ///< EmptyRows: fraction of empty rows
  int64_t denseRow = -1;  ///< DenseRow: index of the dense row; -1: rows / 2
  int64_t minRowLength = -1, maxRowLength = -1; ///< VariedRows: the range of row lengths
  RowDist rowDist = RowDist::Uniform;           ///< VariedRows: how lengths are drawn
  int powerExponent = 2;                        ///< VariedRows, PowerLaw: 1, 2 or 3
  uint64_t seed = 1;
  Values values = Values::Default;
  /// Called now and then while entries are drawn, with the fraction placed so far (0 to 1), so
  /// that a long generation (R-MAT with millions of edges) can show its progress. May be empty.
  std::function<void(double placed)> progress;
};

/// Parses a kind name as the CLI spells it ("uniform", "stencil3d-27", "rmat", ...).
bool parseKind(const std::string &name, Kind &out);
const char *kindName(Kind k);

/// Generates the matrix. On failure returns false, leaves *out zeroed and sets *error.
bool generate(const Options &opts, spl_csr *out, std::string *error);

/// Structural summary used by the CLI's --stats and by the tests.
struct Stats {
  int64_t rows = 0, cols = 0, nnz = 0;
  int64_t emptyRows = 0, minRow = 0, maxRow = 0;
  double avgRow = 0;
  int64_t bandwidth = 0;   ///< max |i - j| over stored entries (0 when nnz = 0)
  int64_t diagonals = 0;   ///< number of distinct j - i
  double top1PercentShare = 0; ///< fraction of nnz in the 1% longest rows (at least one row)
};
Stats stats(const spl_csr &m);

} // namespace splmatgen

#endif // SPL_MATGEN_H
