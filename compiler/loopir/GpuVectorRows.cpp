/// \file GpuVectorRows.cpp: rows=vector grid loops as GpuKernels (see the header).
#include "loopir/GpuVectorRows.h"

#include <string>
#include <vector>

#include "loopir/RowPatterns.h"
#include "support/Error.h"

namespace spl::loopir {
namespace {

bool isVectorGridLoop(const Stmt &s) {
  return s.kind == StmtKind::For && (s.loop == LoopKind::GpuGlobal || s.loop == LoopKind::Parallel) &&
         s.rows == ast::GpuRowMapping::Vector;
}

ExprP add(ExprP a, ExprP b) { return bin(BinOp::Add, std::move(a), std::move(b)); }
ExprP mul(ExprP a, ExprP b) { return bin(BinOp::Mul, std::move(a), std::move(b)); }
ExprP div(ExprP a, ExprP b) { return bin(BinOp::Div, std::move(a), std::move(b)); }

class VectorRows {
 public:
  explicit VectorRows(Function &f) : f_(f), next_(f.freshVarId()) {}

  StmtP lower(const Stmt &loop) {
    RowShape shape;
    internal_assert(matchRow(loop, shape)) << "GpuVectorRows: grid loop " << loop.name << " of " << f_.name
                                           << " maps its rows as vectors but is not a row reduction";
    const Stmt &red = *shape.reduction;
    std::vector<StmtP> body;
    ExprP tid = gpuIndex(GpuIndexKind::ThreadX);
    ExprP lane32 = let(body, "lane", bin(BinOp::Rem, tid, cInt(32)));
    ExprP threadOfGrid = add(mul(gpuIndex(GpuIndexKind::BlockX), gpuIndex(GpuIndexKind::BlockDimX)), tid);
    ExprP warp = let(body, "warp", div(threadOfGrid, cInt(32)));
    ExprP warps = let(body, "warps", div(mul(gpuIndex(GpuIndexKind::GridDimX), gpuIndex(GpuIndexKind::BlockDimX)), cInt(32)));
    ExprP rows = let(body, "rows", cast(loop.b, Ty::I64));
    ExprP width;
    if (loop.rowLanes > 0) {
      width = let(body, "width", cInt(loop.rowLanes));  // gpu_rows(i, vector, W)
    } else {
      ExprP average = let(body, "average_length", averageLength(loop, shape, rows));
      width = let(body, "width", lanesCovering(average));
    }
    ExprP rowsPerWarp = let(body, "rows_per_warp", div(cInt(32), width));
    ExprP rowOfLane = let(body, "row_of_lane", div(lane32, width));
    ExprP laneOfRow = let(body, "lane_of_row", bin(BinOp::Rem, lane32, width));

    // A group of rows, one a lane's row: enter them (prefix, initial value, range), measure
    // them, then run them side by side or one at a time.
    std::vector<StmtP> group;
    int first = fresh();
    ExprP groupStart = var(first, Ty::I64);
    Ty rangeTy = red.a->type;
    ExprP mine = let(group, "row", add(groupStart, rowOfLane));
    group.push_back(decl(loop.var, loop.name, loop.a->type, cast(mine, loop.a->type)));
    std::string accName = "acc";
    for (const StmtP &d : shape.prefix)
      if (d->var == shape.acc) accName = d->name;
    ExprP identity = combineIdentity(shape);
    group.push_back(decl(shape.acc, accName, shape.accTy, identity));
    for (const StmtP &d : shape.prefix)
      if (d->var != shape.acc) group.push_back(decl(d->var, d->name, d->type, nullptr));  // set where the row exists
    int loVar = fresh(), hiVar = fresh();
    group.push_back(decl(loVar, "lo", rangeTy, cInt(0, rangeTy)));
    group.push_back(decl(hiVar, "hi", rangeTy, cInt(0, rangeTy)));
    ExprP lo = var(loVar, rangeTy), hi = var(hiVar, rangeTy);
    // Row `loop.var`'s prefix (its initial value through its first lane: lanes start from the
    // identity) and its reduction's range.
    auto enterRow = [&](const ExprP &laneInRow) {
      std::vector<StmtP> enter;
      for (const StmtP &d : shape.prefix) {
        if (!d->a) continue;
        if (d->var == shape.acc) enter.push_back(ifThen(bin(BinOp::Eq, laneInRow, cInt(0)), assignVar(shape.acc, d->a)));
        else enter.push_back(assignVar(d->var, d->a));
      }
      enter.push_back(assignVar(loVar, red.a));
      enter.push_back(assignVar(hiVar, red.b));
      return block(enter);
    };
    // The row's lanes stride over its range, combine, and its first lane runs the suffix.
    auto runRow = [&](const ExprP &exists, const ExprP &laneInRow, const ExprP &lanes) {
      auto strided = std::make_shared<Stmt>(red);
      strided->a = add(lo, cast(laneInRow, rangeTy));
      strided->b = hi;
      strided->step = cast(lanes, rangeTy);
      strided->loop = LoopKind::Serial;
      strided->segment = loopir::Segment{};  // a lane's share of the segment, not its k-th entries
      int other = fresh();
      return block({ifThen(exists, strided),
                    warpReduce(shape.acc, other, lanes, substituteVar(shape.combine, kShuffled, var(other, shape.accTy))),
                    ifThen(bin(BinOp::And, exists, bin(BinOp::Eq, laneInRow, cInt(0))), block(shape.suffix))});
    };
    ExprP mineExists = bin(BinOp::Lt, mine, rows);
    group.push_back(ifThen(mineExists, enterRow(laneOfRow)));
    int stepsVar = fresh();
    ExprP length = mm(true, cast(bin(BinOp::Sub, hi, lo), Ty::I64), cInt(0));
    group.push_back(decl(stepsVar, "steps", Ty::I64, div(add(length, bin(BinOp::Sub, width, cInt(1))), width)));
    ExprP steps = var(stepsVar, Ty::I64);
    int partner = fresh();
    group.push_back(warpReduce(stepsVar, partner, cInt(32), mm(true, steps, var(partner, Ty::I64))));
    ExprP longest = let(group, "longest", warpShuffle(ShuffleKind::Index, steps, cInt(0), cInt(32)));
    // A hub among the group's rows: each row in turn on all 32 lanes.
    int round = fresh();
    std::vector<StmtP> each;
    ExprP row = let(each, "row", add(groupStart, var(round, Ty::I64)));
    each.push_back(assignVar(loop.var, cast(row, loop.a->type)));
    each.push_back(assignVar(shape.acc, identity));
    each.push_back(assignVar(loVar, cInt(0, rangeTy)));
    each.push_back(assignVar(hiVar, cInt(0, rangeTy)));
    ExprP exists = bin(BinOp::Lt, row, rows);
    each.push_back(ifThen(exists, enterRow(lane32)));
    each.push_back(runRow(exists, lane32, cInt(32)));
    StmtP oneAtATime = forLoop(round, "round", cInt(0), rowsPerWarp, block(each), LoopKind::Serial);
    group.push_back(ifThen(bin(BinOp::Gt, longest, cInt(kLongRowSteps)), oneAtATime, runRow(mineExists, laneOfRow, width)));

    body.push_back(steppedLoop(first, "group", mul(warp, rowsPerWarp), rows, mul(warps, rowsPerWarp), block(group)));
    return gpuKernel(loop.name, loop.rows, threadsFor(loop), kBlock, block(body));
  }

 private:
  static constexpr int64_t kBlock = 256;

  Function &f_;
  int next_;

  int fresh() { return next_++; }

  /// A fresh variable declared in `out` with `value`; returns its use.
  ExprP let(std::vector<StmtP> &out, const std::string &name, ExprP value, Ty t = Ty::I64) {
    int v = fresh();
    out.push_back(decl(v, name, t, std::move(value)));
    return var(v, t);
  }

  /// The rows' average length, the same on every thread: the offsets' total over the rows; a
  /// dense row's length (a range free of loads, of the row and of what the row declares); else
  /// kVectorRowLanes.
  ExprP averageLength(const Stmt &loop, const RowShape &shape, const ExprP &rows) {
    const Stmt &red = *shape.reduction;
    if (shape.offsets >= 0) {
      const Buffer *offs = f_.buffer(shape.offsets);
      internal_assert(offs) << "GpuVectorRows: the offsets buffer b" << shape.offsets << " of " << f_.name << " is missing";
      ExprP total = bin(BinOp::Sub, cast(load(shape.offsets, rows, offs->elem), Ty::I64),
                        cast(load(shape.offsets, cInt(0), offs->elem), Ty::I64));
      return div(total, mm(true, rows, cInt(1)));
    }
    if (!hasLoad(red.a) && !hasLoad(red.b) && !mentionsVar(red.a, loop.var) && !mentionsVar(red.b, loop.var) &&
        !mentionsPrefix(shape, red))
      return bin(BinOp::Sub, cast(red.b, Ty::I64), cast(red.a, Ty::I64));
    return cInt(kVectorRowLanes);
  }

  /// The threads to launch (the host evaluates it): the rows times their lanes (32 where
  /// offsets give the lengths: the device picks W from them), or a fixed grid when the row
  /// count reads memory.
  static ExprP threadsFor(const Stmt &loop) {
    if (hasLoad(loop.a) || hasLoad(loop.b)) return cInt(1024 * kBlock);
    ExprP count = bin(BinOp::Sub, cast(loop.b, Ty::I64), cast(loop.a, Ty::I64));
    ExprP lanes = cInt(kVectorRowLanes);
    if (loop.rowLanes > 0) lanes = cInt(loop.rowLanes);
    else if (ExprP dense = denseRowLength(loop)) lanes = lanesCovering(cast(dense, Ty::I64));
    else if (rowOffsetsKnown(loop)) lanes = cInt(32);
    return mul(count, lanes);
  }
};

}  // namespace

int lowerVectorRows(Function &f) {
  if (!f.cuda) return 0;
  int lowered = 0;
  VectorRows rows(f);
  auto lowerOne = [&](const StmtP &s) -> StmtP {
    if (!isVectorGridLoop(*s)) return s;
    ++lowered;
    return rows.lower(*s);
  };
  rewriteTopLevel(f, lowerOne);
  return lowered;
}

}  // namespace spl::loopir
