/// \file RowPatterns.h: the shapes of a GPU grid loop over rows that its row mappings need.
/// Takes:      a loop of loop IR (a cuda function's top-level GpuGlobal loop, from Flatten).
/// Gives:      the recognisers loopir/GpuRowStrategy chooses a mapping with and the CUDA back
///             end emits it from:
///              - matchRow: rows each reduced into one accumulator (a vector of lanes per row
///                can run them; Vector), and positionPure: rows whose reduction reads its row
///                only through segment positions (a merge path over row ends and nonzeros can
///                run them; Merge);
///              - matchCompaction: rows that append, in order, what passes a test (dense2csr's
///                `which`, a BFS step's unseen neighbours; a warp a row can run them; Compact).
/// Assumes:    where a row's reduction runs over a segment of a compressed level, Flatten put
///             the loopir::Segment on it (the one place segments are recognised).
#pragma once

#include <vector>

#include "loopir/LoopIr.h"

namespace spl::loopir {

/// A row loop over a compressed level whose body is: declarations, then one reduction loop
/// that only accumulates into one declared scalar (acc = acc op e, op reassociable), then
/// anything (the row's result). Such rows can be split over several lanes.
struct RowShape {
  std::vector<StmtP> prefix, suffix;
  const Stmt *reduction = nullptr;
  int acc = 0;
  Ty accTy = Ty::F32;
  ExprP combine;       // acc op SHUFFLED, with SHUFFLED a placeholder variable
  ExprP contribution;  // e of the update acc = acc op e
  /// positionPure: the reduction's declarations and contribution in terms of kPosition.
  std::vector<StmtP> perNonzero;
  /// Where the rows' segments are (the reduction's loopir::Segment, -1: it runs over none):
  /// row i's reduction runs over positions [offsets[i] - offsets[0], offsets[i+1] - offsets[0]),
  /// or from offsets[i] when fromZero (a LIL row's Sigma prefix).
  int offsets = -1;
  bool fromZero = false;
};

/// The placeholder variable of RowShape::combine (the value shuffled in from another lane).
constexpr int kShuffled = -77;
/// The variable that stands for a segment position in RowShape::perNonzero.
constexpr int kPosition = -78;

/// The identity of the row's combining operator (0 for +, 1 for *, the type's lowest value
/// for max, its highest for min): every lane but a row's first, and every partial of a row,
/// starts there, so the row's initial value enters once.
ExprP combineIdentity(const RowShape &shape);

/// Fills `shape` when `loop` (starting at 0) is a row loop of that form.
bool matchRow(const Stmt &loop, RowShape &shape);
/// A loop over rows, each reduced into one accumulator (matchRow).
bool rowPattern(const Stmt &loop);
/// Fills shape.perNonzero and shape.contribution when the reduction reads its row only
/// through segment positions (loopir/SegmentPosition): then the contribution of a nonzero
/// depends on its position alone, not on its row or its iteration, and nothing in it reads
/// what the row's prefix declared.
bool positionPure(const Stmt &loop, RowShape &shape);
/// A row loop whose rows can run as a merge path (matchRow and positionPure).
bool mergesRows(const Stmt &loop);
/// Does the reduction's range read a variable the row's prefix declares?
bool mentionsPrefix(const RowShape &shape, const Stmt &red);

/// A row loop that appends, in order, what passes a test (dense2csr's `which`, a BFS step's
/// unseen neighbours):
///
///   for i in [0, n) { decls; var cnt = 0
///     for j in [a, b) serial { decls; if ((cnt < LEN) && PRED) { stores at ...cnt...; cnt = cnt + 1 } }
///     for r in [cnt, LEN) serial { fill }
///   }
///
/// with LEN, PRED and the stored values free of cnt. One thread a row walked j serially: as few
/// threads as rows (1414 for a 1414 x 1414 dense matrix) and as long as the longest row.
struct Compaction {
  std::vector<StmtP> prefix;  // the row's declarations
  int cnt = 0;
  Ty cntTy = Ty::I64;
  const Stmt *scan = nullptr;  // the j loop
  std::vector<StmtP> scanDecls, appends;
  ExprP length, test;
  const Stmt *fill = nullptr;  // the r loop
};

bool matchCompaction(const Stmt &loop, Compaction &c);
bool compactsRows(const Stmt &loop);

/// The length every row of `loop` shares when its rows are dense (the row reduction or the
/// compaction's scan runs over a range free of loads, of the row and of what the row
/// declares), else null.
ExprP denseRowLength(const Stmt &loop);
/// The lanes a row takes for rows of (average) length `length`: the least power of two at or
/// above it, within [1, 32] (a select chain the host and the device both evaluate).
ExprP lanesCovering(const ExprP &length);
/// Whether the row loop's lengths come from offsets (a segment of a compressed level).
bool rowOffsetsKnown(const Stmt &loop);

}  // namespace spl::loopir
