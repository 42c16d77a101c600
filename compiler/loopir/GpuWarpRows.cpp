/// \file GpuWarpRows.cpp: rows=vector and rows=compact grid loops as GpuKernels (see the header).
#include "loopir/GpuWarpRows.h"

#include <string>
#include <vector>

#include "loopir/RowPatterns.h"
#include "support/Error.h"

namespace spl::loopir {
namespace {

using ast::GpuRowMapping;

bool isWarpRowsLoop(const Stmt &s) {
  return s.kind == StmtKind::For && (s.loop == LoopKind::GpuGlobal || s.loop == LoopKind::Parallel) &&
         (s.rows == GpuRowMapping::Vector || s.rows == GpuRowMapping::Compact);
}

ExprP add(ExprP a, ExprP b) { return bin(BinOp::Add, std::move(a), std::move(b)); }
ExprP sub(ExprP a, ExprP b) { return bin(BinOp::Sub, std::move(a), std::move(b)); }
ExprP mul(ExprP a, ExprP b) { return bin(BinOp::Mul, std::move(a), std::move(b)); }
ExprP div(ExprP a, ExprP b) { return bin(BinOp::Div, std::move(a), std::move(b)); }
ExprP lt(ExprP a, ExprP b) { return bin(BinOp::Lt, std::move(a), std::move(b)); }
ExprP isZero(ExprP a) { return bin(BinOp::Eq, std::move(a), cInt(0)); }

/// One row loop's lowering: the skeleton (lower) and what a row's lanes do, per mapping.
class WarpRows {
 public:
  WarpRows(Function &f, int &nextVar, const Stmt &loop) : f_(f), next_(nextVar), loop_(loop) {
    if (loop.rows == GpuRowMapping::Vector) {
      internal_assert(matchRow(loop, shape_)) << "GpuWarpRows: grid loop " << loop.name << " of " << f.name
                                              << " maps its rows as vectors but is not a row reduction";
      range_ = shape_.reduction;
      prefix_ = shape_.prefix;
    } else {
      internal_assert(matchCompaction(loop, compaction_)) << "GpuWarpRows: grid loop " << loop.name << " of " << f.name
                                                          << " compacts its rows but is not a compaction";
      range_ = compaction_.scan;
      prefix_ = compaction_.prefix;
    }
    rangeTy_ = range_->a->type;
  }

  StmtP lower() {
    std::vector<StmtP> body;
    ExprP tid = gpuIndex(GpuIndexKind::ThreadX);
    lane32_ = let(body, "lane", bin(BinOp::Rem, tid, cInt(32)));
    ExprP threadOfGrid = add(mul(gpuIndex(GpuIndexKind::BlockX), gpuIndex(GpuIndexKind::BlockDimX)), tid);
    ExprP warp = let(body, "warp", div(threadOfGrid, cInt(32)));
    ExprP warps = let(body, "warps", div(mul(gpuIndex(GpuIndexKind::GridDimX), gpuIndex(GpuIndexKind::BlockDimX)), cInt(32)));
    rows_ = let(body, "rows", cast(loop_.b, Ty::I64));
    ExprP width;
    if (loop_.knobs.lanes > 0) {
      width = let(body, "width", cInt(loop_.knobs.lanes));  // gpu_rows(i, vector, W)
    } else {
      ExprP average = let(body, "average_length", averageLength());
      width = let(body, "width", lanesCovering(average));
    }
    ExprP rowsPerWarp = let(body, "rows_per_warp", div(cInt(32), width));
    ExprP rowOfLane = let(body, "row_of_lane", div(lane32_, width));
    ExprP laneOfRow = let(body, "lane_of_row", bin(BinOp::Rem, lane32_, width));

    // A group of rows, one a lane's: enter them, measure them, then run them side by side or
    // one at a time.
    std::vector<StmtP> group;
    int first = fresh();
    ExprP groupStart = var(first, Ty::I64);
    ExprP mine = let(group, "row", add(groupStart, rowOfLane));
    group.push_back(decl(loop_.var, loop_.name, loop_.a->type, cast(mine, loop_.a->type)));
    int loVar = fresh(), hiVar = fresh();
    lo_ = var(loVar, rangeTy_);
    hi_ = var(hiVar, rangeTy_);
    group.push_back(decl(loVar, "lo", rangeTy_, cInt(0, rangeTy_)));
    group.push_back(decl(hiVar, "hi", rangeTy_, cInt(0, rangeTy_)));
    declareRow(group);
    ExprP mineExists = lt(mine, rows_);
    group.push_back(ifThen(mineExists, enterRow(laneOfRow)));
    ExprP steps = let(group, "steps", stepsOver(width));
    int partner = fresh();
    group.push_back(warpReduce(steps->var, partner, cInt(32), mm(true, steps, var(partner, Ty::I64))));
    ExprP longest = let(group, "longest", warpShuffle(ShuffleKind::Index, steps, cInt(0), cInt(32)));
    // A hub among the group's rows: each row in turn on all 32 lanes.
    int round = fresh();
    std::vector<StmtP> each;
    ExprP row = let(each, "row", add(groupStart, var(round, Ty::I64)));
    each.push_back(assignVar(loop_.var, cast(row, loop_.a->type)));
    each.push_back(assignVar(loVar, cInt(0, rangeTy_)));
    each.push_back(assignVar(hiVar, cInt(0, rangeTy_)));
    resetRow(each);
    ExprP exists = lt(row, rows_);
    each.push_back(ifThen(exists, enterRow(lane32_)));
    each.push_back(runRow(exists, lane32_, cInt(32), stepsOver(cInt(32))));
    StmtP oneAtATime = forLoop(round, "round", cInt(0), rowsPerWarp, block(each), LoopKind::Serial);
    group.push_back(
        ifThen(bin(BinOp::Gt, longest, cInt(kLongRowSteps)), oneAtATime, runRow(mineExists, laneOfRow, width, longest)));

    body.push_back(steppedLoop(first, "group", mul(warp, rowsPerWarp), rows_, mul(warps, rowsPerWarp), block(group)));
    return gpuKernel(loop_.name, loop_.rows, threadsFor(), kBlock, block(body));
  }

 private:
  static constexpr int64_t kBlock = 256;

  Function &f_;
  int &next_;
  const Stmt &loop_;
  RowShape shape_;          // vector
  Compaction compaction_;   // compact
  const Stmt *range_ = nullptr;  // the loop over a row's positions: the reduction, or the scan
  std::vector<StmtP> prefix_;
  Ty rangeTy_ = Ty::I64;
  ExprP lane32_, rows_, lo_, hi_;
  ExprP length_;            // compact: the row's LEN
  int count_ = 0;           // compact: the row's appends so far

  bool vector() const { return loop_.rows == GpuRowMapping::Vector; }
  int fresh() { return next_++; }

  /// A fresh variable declared in `out` with `value`; returns its use.
  ExprP let(std::vector<StmtP> &out, const std::string &name, ExprP value, Ty t = Ty::I64) {
    int v = fresh();
    out.push_back(decl(v, name, t, std::move(value)));
    return var(v, t);
  }

  /// The steps of `width` lanes that the entered row's range [lo, hi) takes.
  ExprP stepsOver(const ExprP &width) const {
    ExprP length = mm(true, cast(sub(hi_, lo_), Ty::I64), cInt(0));
    return div(add(length, sub(width, cInt(1))), width);
  }

  /// The row's variables, declared where every later statement of the group sees them: the
  /// prefix's (set where the row exists), the accumulator (vector) or LEN and the count
  /// (compact).
  void declareRow(std::vector<StmtP> &group) {
    for (const StmtP &d : prefix_) {
      if (vector() && d->var == shape_.acc) group.push_back(decl(d->var, d->name, d->type, combineIdentity(shape_)));
      else group.push_back(decl(d->var, d->name, d->type, nullptr));
    }
    if (!vector()) {
      length_ = let(group, "length", cInt(0));
      group.push_back(decl(compaction_.cnt, "count", compaction_.cntTy, cInt(0, compaction_.cntTy)));
      count_ = fresh();
      group.push_back(decl(count_, "appended", Ty::I64, cInt(0)));
    }
  }

  /// Before a hub's next row: what declareRow started from.
  void resetRow(std::vector<StmtP> &each) {
    if (vector()) each.push_back(assignVar(shape_.acc, combineIdentity(shape_)));
    else each.push_back(assignVar(length_->var, cInt(0)));
  }

  /// Row `loop.var`'s prefix and range (and LEN); a vector row's initial value enters through
  /// its first lane (the others start from the identity).
  StmtP enterRow(const ExprP &laneInRow) {
    std::vector<StmtP> enter;
    for (const StmtP &d : prefix_) {
      if (!d->a) continue;
      if (vector() && d->var == shape_.acc) enter.push_back(ifThen(isZero(laneInRow), assignVar(shape_.acc, d->a)));
      else enter.push_back(assignVar(d->var, d->a));
    }
    if (!vector()) enter.push_back(assignVar(length_->var, cast(compaction_.length, Ty::I64)));
    enter.push_back(assignVar(lo_->var, range_->a));
    enter.push_back(assignVar(hi_->var, range_->b));
    return block(enter);
  }

  /// What a row's lanes do, `steps` steps of `lanes` lanes (the same on every lane of the warp).
  StmtP runRow(const ExprP &exists, const ExprP &laneInRow, const ExprP &lanes, const ExprP &steps) {
    return vector() ? reduceRow(exists, laneInRow, lanes) : compactRow(exists, laneInRow, lanes, steps);
  }

  /// vector: the lanes stride over the row's range, combine, and the first lane runs the suffix.
  StmtP reduceRow(const ExprP &exists, const ExprP &laneInRow, const ExprP &lanes) {
    auto strided = std::make_shared<Stmt>(*range_);
    strided->a = add(lo_, cast(laneInRow, rangeTy_));
    strided->b = hi_;
    strided->step = cast(lanes, rangeTy_);
    strided->loop = LoopKind::Serial;
    strided->segment = loopir::Segment{};  // a lane's share of the segment, not its k-th entries
    int other = fresh();
    return block({ifThen(exists, strided),
                  warpReduce(shape_.acc, other, lanes, substituteVar(shape_.combine, kShuffled, var(other, shape_.accTy))),
                  ifThen(bin(BinOp::And, exists, isZero(laneInRow)), block(shape_.suffix))});
  }

  /// The scan's candidate `j` bound and its declarations evaluated (they read j).
  std::vector<StmtP> atCandidate(const ExprP &j) const {
    const Stmt &scan = *compaction_.scan;
    std::vector<StmtP> out{decl(scan.var, scan.name, rangeTy_, cast(j, rangeTy_))};
    out.insert(out.end(), compaction_.scanDecls.begin(), compaction_.scanDecls.end());
    return out;
  }

  /// compact: kCompactSteps steps of candidates tested, then counted and appended in order;
  /// then the fill.
  StmtP compactRow(const ExprP &exists, const ExprP &laneInRow, const ExprP &lanes, const ExprP &steps) {
    const Compaction &c = compaction_;
    ExprP appended = var(count_, Ty::I64);
    std::vector<StmtP> run{assignVar(count_, cInt(0))};
    int blockVar = fresh();
    ExprP blockOfSteps = var(blockVar, Ty::I64);
    std::vector<StmtP> tests, counts;
    for (int64_t u = 0; u < kCompactSteps; ++u) {
      ExprP step = add(mul(blockOfSteps, cInt(kCompactSteps)), cInt(u));
      ExprP j = let(tests, "candidate", add(add(cast(lo_, Ty::I64), mul(step, lanes)), laneInRow));
      ExprP passes = let(tests, "passes", cInt(0, Ty::I1), Ty::I1);
      std::vector<StmtP> test = atCandidate(j);
      test.push_back(assignVar(passes->var, cast(c.test, Ty::I1)));
      tests.push_back(ifThen(bin(BinOp::And, exists, lt(j, cast(hi_, Ty::I64))), block(test)));
      // The passing lanes of the row before this one go first.
      ExprP at = let(counts, "position", add(appended, warpVote(VoteKind::Before, passes, lanes)));
      std::vector<StmtP> append = atCandidate(j);
      append.push_back(assignVar(c.cnt, cast(at, c.cntTy)));
      append.insert(append.end(), c.appends.begin(), c.appends.end());
      counts.push_back(ifThen(bin(BinOp::And, passes, lt(at, length_)), block(append)));
      counts.push_back(assignVar(count_, add(appended, warpVote(VoteKind::Count, passes, lanes))));
    }
    tests.insert(tests.end(), counts.begin(), counts.end());
    run.push_back(forLoop(blockVar, "steps", cInt(0), div(add(steps, cInt(kCompactSteps - 1)), cInt(kCompactSteps)), block(tests),
                          LoopKind::Serial));
    auto fill = std::make_shared<Stmt>(*c.fill);
    Ty fillTy = c.fill->a->type;
    fill->a = cast(add(mm(false, appended, length_), laneInRow), fillTy);
    fill->b = cast(length_, fillTy);
    fill->step = cast(lanes, fillTy);
    fill->loop = LoopKind::Serial;
    run.push_back(ifThen(exists, fill));
    return block(run);
  }

  /// The rows' average length, the same on every thread: the offsets' total over the rows (a
  /// vector's segments); a dense row's length (RowPatterns' denseRowLength); else kWarpRowLanes.
  ExprP averageLength() {
    if (vector() && shape_.offsets >= 0) {
      const Buffer *offs = f_.buffer(shape_.offsets);
      internal_assert(offs) << "GpuWarpRows: the offsets buffer b" << shape_.offsets << " of " << f_.name << " is missing";
      ExprP total = sub(cast(load(shape_.offsets, rows_, offs->elem), Ty::I64), cast(load(shape_.offsets, cInt(0), offs->elem), Ty::I64));
      return div(total, mm(true, rows_, cInt(1)));
    }
    if (ExprP dense = denseRowLength(loop_)) return cast(dense, Ty::I64);
    return cInt(kWarpRowLanes);
  }

  /// The threads to launch (the host evaluates it): the rows times their lanes (32 for vector
  /// rows whose offsets give the lengths: the device picks W from them), or a fixed grid when
  /// the row count reads memory.
  ExprP threadsFor() const {
    if (hasLoad(loop_.a) || hasLoad(loop_.b)) return cInt(1024 * kBlock);
    ExprP count = sub(cast(loop_.b, Ty::I64), cast(loop_.a, Ty::I64));
    ExprP lanes = cInt(kWarpRowLanes);
    if (loop_.knobs.lanes > 0) lanes = cInt(loop_.knobs.lanes);
    else if (ExprP dense = denseRowLength(loop_)) lanes = lanesCovering(cast(dense, Ty::I64));
    else if (vector() && rowOffsetsKnown(loop_)) lanes = cInt(32);
    return mul(count, lanes);
  }
};

}  // namespace

int lowerWarpRows(Function &f) {
  if (!f.cuda) return 0;
  int lowered = 0;
  int nextVar = f.freshVarId();
  rewriteTopLevel(f, [&](const StmtP &s) -> StmtP {
    if (!isWarpRowsLoop(*s)) return s;
    ++lowered;
    return WarpRows(f, nextVar, *s).lower();
  });
  return lowered;
}

}  // namespace spl::loopir
