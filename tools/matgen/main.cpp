// spl-matgen: writes a seeded, deterministic sparse matrix of a given structure class as a
// Matrix Market file (through the matrix library). See --help and matgen.h.
#include "matgen.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <unistd.h>

namespace {

const char *kUsage = R"(usage: spl-matgen KIND [options] -o FILE.mtx

Writes a sparse matrix of the given structure class as "%%MatrixMarket matrix coordinate real
general". The same options and seed give the same file on every machine.

Kinds (sizes: --rows N, --cols M (default N), and the number of entries as --nnz Z, or
--degree K = Z / N, or --density D = Z / (N * M); entries are unique, rows sorted):
  uniform        entries uniform over the matrix
  banded         the diagonal plus entries with |i - j| <= --bandwidth W (default 2 * degree);
                 --offband F puts a fraction F of them anywhere (circuits, economics)
  stencil2d-5    2-D 5-point Laplacian on --nx X --ny Y (or --rows N: a near-square grid);
                 nnz = 5XY - 2X - 2Y
  stencil3d-7    3-D 7-point Laplacian on --nx --ny --nz (or --rows N: a near-cubic grid);
                 nnz = 7XYZ - 2(YZ + XZ + XY)
  stencil3d-27   3-D 27-point stencil; nnz = (3X - 2)(3Y - 2)(3Z - 2)
  blocks         dense --block B x B blocks (default 4): the diagonal blocks plus blocks within
                 --bandwidth W block columns (default 2 * blocks per block row), --offband F
  dense          every entry (N x M)
  rmat           R-MAT / Kronecker graph, Graph500 parameters (--a 0.57 --b 0.19 --c 0.19);
                 --symmetric stores (j, i) with (i, j), --permute relabels vertices randomly
  ba             Barabasi-Albert power-law graph: N vertices, each new vertex attached to
                 --degree M existing ones by preferential attachment; symmetric, nnz = 2M(N - M)
  dense-row      uniform plus row --dense-row R (default N / 2) holding every column
  empty-rows     a fraction --empty-fraction F (default 0.9) of the rows empty, the others
                 uniform with at least one entry each
  row            1 x N (--cols N), dense unless --nnz/--density is given
  col            N x 1 (--rows N), dense unless --nnz/--density is given
  empty          N x M with nnz = 0
  varied         each row's length drawn from --row-lengths MIN:MAX by --row-dist uniform
                 (default) or powerlaw (P(MIN + k - 1) ~ 1 / k^--exponent E, E = 1, 2 or 3:
                 most rows short, a tail of long ones); the entries within --bandwidth W of the
                 diagonal (default MAX), a fraction --offband F of them anywhere outside the band

Options:
  --rows N  --cols M  --nnz Z  --degree K  --density D
  --nx X  --ny Y  --nz Z     stencil grid
  --bandwidth W  --offband F  --block B
  --a A  --b B  --c C  --symmetric  --permute
  --dense-row R  --empty-fraction F
  --row-lengths MIN:MAX  --row-dist uniform|powerlaw  --exponent E
  --values random|ones|laplacian
                 random (default; stencils: laplacian): nonzero multiples of 2^-8 in [-1, 1),
                 exact in float; ones: 1 everywhere; laplacian: -1 off the diagonal, and on it
                 the stencil's neighbour count (other kinds: the row's off-diagonal count)
  --seed S       64-bit seed (default 1)
  -o, --output FILE   where to write (required unless --stats-only)
  --stats        print a structural summary (rows, nnz, row lengths, bandwidth, skew)
  --stats-only   print the summary and write nothing
  --progress     show the progress on stderr (the default when stderr is a terminal)
  --quiet        never show it
  -h, --help     this text
)";

/// Progress on stderr, one line redrawn in place: "spl-matgen: rmat: drawing entries 42%". A
/// step repeats only when its whole percentage changes; end() finishes the line, so that what
/// follows (an error, the statistics) starts a line of its own.
struct Progress {
  bool on;
  std::string kind, last;
  bool open = false;
  Progress(bool enabled, const char *k) : on(enabled), kind(k) {}
  void step(const char *phase, double fraction) {
    if (!on) return;
    std::string text = std::string(phase) + (fraction >= 0 ? " " + std::to_string(static_cast<int>(fraction * 100)) + "%" : "");
    if (text == last) return;
    last = text;
    std::fprintf(stderr, "\rspl-matgen: %s: %-40s", kind.c_str(), text.c_str());
    std::fflush(stderr);
    open = true;
  }
  void end() {
    if (open) std::fputc('\n', stderr);
    open = false;
  }
};

bool parseInt(const char *s, int64_t &out) {
  errno = 0;
  char *end = nullptr;
  double d = std::strtod(s, &end);
  if (errno || end == s || *end || !(std::fabs(d) <= 9007199254740992.0) || d != std::floor(d))
    return false;
  out = static_cast<int64_t>(d);
  return true;
}

bool parseUnsigned(const char *s, uint64_t &out) {
  errno = 0;
  char *end = nullptr;
  unsigned long long v = std::strtoull(s, &end, 0);
  if (errno || end == s || *end || s[0] == '-')
    return false;
  out = v;
  return true;
}

bool parseReal(const char *s, double &out) {
  errno = 0;
  char *end = nullptr;
  out = std::strtod(s, &end);
  return !errno && end != s && !*end && std::isfinite(out);
}

int usageError(const std::string &msg) {
  std::fprintf(stderr, "spl-matgen: %s\n(spl-matgen --help for usage)\n", msg.c_str());
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  using namespace splmatgen;
  Options o;
  std::string output;
  bool haveKind = false, printStats = false, statsOnly = false;
  // Progress on stderr: by default only when it is a terminal (a log gets none).
  enum { ProgressAuto, ProgressOn, ProgressOff } progress = ProgressAuto;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "--version") {
      std::printf("spl-matgen (SPL) %s\n", SPL_TOOLS_VERSION);
      return 0;
    }
    if (a == "--symmetric") {
      o.symmetric = true;
      continue;
    }
    if (a == "--permute") {
      o.permute = true;
      continue;
    }
    if (a == "--stats") {
      printStats = true;
      continue;
    }
    if (a == "--stats-only") {
      printStats = statsOnly = true;
      continue;
    }
    if (a == "--progress" || a == "--quiet") {
      progress = a == "--progress" ? ProgressOn : ProgressOff;
      continue;
    }
    if (a.rfind("-", 0) != 0) {
      if (haveKind)
        return usageError("unexpected argument '" + a + "'");
      if (!parseKind(a, o.kind))
        return usageError("unknown kind '" + a + "'");
      haveKind = true;
      continue;
    }
    if (i + 1 >= argc)
      return usageError("option " + a + " needs a value");
    const char *v = argv[++i];
    bool ok = true;
    if (a == "-o" || a == "--output")
      output = v;
    else if (a == "--rows")
      ok = parseInt(v, o.rows) && o.rows >= 0;
    else if (a == "--cols")
      ok = parseInt(v, o.cols) && o.cols >= 0;
    else if (a == "--nnz")
      ok = parseInt(v, o.nnz) && o.nnz >= 0;
    else if (a == "--degree")
      ok = parseReal(v, o.degree) && o.degree >= 0;
    else if (a == "--density")
      ok = parseReal(v, o.density) && o.density >= 0 && o.density <= 1;
    else if (a == "--nx")
      ok = parseInt(v, o.nx) && o.nx > 0;
    else if (a == "--ny")
      ok = parseInt(v, o.ny) && o.ny > 0;
    else if (a == "--nz")
      ok = parseInt(v, o.nz) && o.nz > 0;
    else if (a == "--bandwidth")
      ok = parseInt(v, o.bandwidth) && o.bandwidth >= 0;
    else if (a == "--offband")
      ok = parseReal(v, o.offband) && o.offband >= 0 && o.offband <= 1;
    else if (a == "--block")
      ok = parseInt(v, o.block) && o.block >= 1;
    else if (a == "--a")
      ok = parseReal(v, o.a);
    else if (a == "--b")
      ok = parseReal(v, o.b);
    else if (a == "--c")
      ok = parseReal(v, o.c);
    else if (a == "--dense-row")
      ok = parseInt(v, o.denseRow) && o.denseRow >= 0;
    else if (a == "--empty-fraction")
      ok = parseReal(v, o.emptyFraction);
    else if (a == "--seed")
      ok = parseUnsigned(v, o.seed);
    else if (a == "--row-lengths") {
      std::string s = v;
      size_t colon = s.find(':');
      ok = colon != std::string::npos && parseInt(s.substr(0, colon).c_str(), o.minRowLength) &&
           parseInt(s.substr(colon + 1).c_str(), o.maxRowLength) && o.minRowLength >= 0 && o.maxRowLength >= o.minRowLength;
    } else if (a == "--row-dist") {
      std::string s = v;
      ok = s == "uniform" || s == "powerlaw";
      o.rowDist = s == "powerlaw" ? RowDist::PowerLaw : RowDist::Uniform;
    } else if (a == "--exponent") {
      int64_t e = 0;
      ok = parseInt(v, e) && e >= 1 && e <= 3;
      o.powerExponent = static_cast<int>(e);
    }
    else if (a == "--values") {
      std::string s = v;
      if (s == "random")
        o.values = Values::Random;
      else if (s == "ones")
        o.values = Values::Ones;
      else if (s == "laplacian")
        o.values = Values::Laplacian;
      else
        ok = false;
    } else
      return usageError("unknown option '" + a + "'");
    if (!ok)
      return usageError("bad value '" + std::string(v) + "' for " + a);
  }
  if (!haveKind)
    return usageError("no kind given");
  if (output.empty() && !statsOnly)
    return usageError("no output file (-o FILE)");

  Progress shown(progress == ProgressOn || (progress == ProgressAuto && isatty(STDERR_FILENO)), kindName(o.kind));
  if (shown.on) o.progress = [&](double placed) { shown.step("drawing entries", placed); };
  spl_csr m{};
  std::string error;
  if (!generate(o, &m, &error)) {
    shown.end();
    std::fprintf(stderr, "spl-matgen: %s: %s\n", kindName(o.kind), error.c_str());
    return 1;
  }
  if (!statsOnly) {
    shown.step(("writing " + std::to_string(m.nnz) + " entries").c_str(), -1);
    // `-o -` is standard output.
    int rc = spl_write_matrix_market(output == "-" ? "/dev/stdout" : output.c_str(), &m);
    if (rc != SPL_MATRIX_OK) {
      shown.end();
      std::fprintf(stderr, "spl-matgen: cannot write %s\n", output.c_str());
      spl_csr_free(&m);
      return 1;
    }
  }
  shown.step("done", -1);
  shown.end();
  if (printStats) {
    Stats s = stats(m);
    std::printf("kind: %s\nrows: %lld\ncols: %lld\nnnz: %lld\nempty_rows: %lld\nrow_length_min: %lld\n"
                "row_length_max: %lld\nrow_length_avg: %.3f\nbandwidth: %lld\ndiagonals: %lld\n"
                "top1pct_row_share: %.4f\n",
                kindName(o.kind), (long long)s.rows, (long long)s.cols, (long long)s.nnz,
                (long long)s.emptyRows, (long long)s.minRow, (long long)s.maxRow, s.avgRow,
                (long long)s.bandwidth, (long long)s.diagonals, s.top1PercentShare);
  }
  spl_csr_free(&m);
  return 0;
}
