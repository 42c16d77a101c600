/// \file GpuMergeRows.cpp: rows=merge grid loops as GpuKernels on a merge path (see the header).
#include "loopir/GpuMergeRows.h"

#include <algorithm>
#include <string>
#include <vector>

#include "loopir/RowPatterns.h"
#include "support/Error.h"

namespace spl::loopir {
namespace {

using ast::GpuRowMapping;

bool isMergeLoop(const Stmt &s) {
  return s.kind == StmtKind::For && (s.loop == LoopKind::GpuGlobal || s.loop == LoopKind::Parallel) && s.rows == GpuRowMapping::Merge;
}

ExprP add(ExprP a, ExprP b) { return bin(BinOp::Add, std::move(a), std::move(b)); }
ExprP sub(ExprP a, ExprP b) { return bin(BinOp::Sub, std::move(a), std::move(b)); }
ExprP mul(ExprP a, ExprP b) { return bin(BinOp::Mul, std::move(a), std::move(b)); }
ExprP div(ExprP a, ExprP b) { return bin(BinOp::Div, std::move(a), std::move(b)); }
ExprP rem(ExprP a, ExprP b) { return bin(BinOp::Rem, std::move(a), std::move(b)); }
ExprP lt(ExprP a, ExprP b) { return bin(BinOp::Lt, std::move(a), std::move(b)); }
ExprP eq(ExprP a, ExprP b) { return bin(BinOp::Eq, std::move(a), std::move(b)); }
ExprP both(ExprP a, ExprP b) { return bin(BinOp::And, std::move(a), std::move(b)); }
ExprP isZero(ExprP a) { return eq(std::move(a), cInt(0)); }
ExprP smax(ExprP a, ExprP b) { return mm(true, std::move(a), std::move(b)); }
ExprP smin(ExprP a, ExprP b) { return mm(false, std::move(a), std::move(b)); }

/// One merge loop's lowering. Every value the warp's lanes must agree on (the search's
/// answers, W, the carries' holders) comes from a shuffle, so the warp-wide nodes (votes,
/// shuffles, reductions) only ever sit under warp-uniform conditions.
class MergeRows {
 public:
  MergeRows(Function &f, int &nextVar, const Stmt &loop, const GpuRowOptions &opts) : f_(f), next_(nextVar), loop_(loop) {
    internal_assert(matchRow(loop, shape_) && positionPure(loop, shape_))
        << "GpuMergeRows: grid loop " << loop.name << " of " << f.name << " runs as a merge path but its rows do not merge";
    const Buffer *offs = f.buffer(shape_.offsets);
    internal_assert(offs) << "GpuMergeRows: the offsets buffer b" << shape_.offsets << " of " << f.name << " is missing";
    offsetsTy_ = offs->elem;
    reads_ = loop.knobs.mergeReads > 0 ? loop.knobs.mergeReads
             : opts.mergeReads > 0     ? opts.mergeReads
                                       : std::max<int64_t>(1, 32 / tyBytes(shape_.accTy));
    if (opts.mergeLongRowSteps >= 0) longSteps_ = opts.mergeLongRowSteps;
    prefetch_ = opts.mergePrefetch;
    // The kernel shows the knobs it was given, by its schedule or else by the options.
    knobs_ = loop.knobs;
    if (knobs_.mergeReads <= 0) knobs_.mergeReads = opts.mergeReads;
    if (knobs_.mergeBlocksPerSm <= 0) knobs_.mergeBlocksPerSm = opts.mergeBlocksPerSm;
    // The kernel's workspaces: two carries a warp (the rows it begins and ends in), one
    // arrival counter a warp.
    carries_ = workspace("merge_carries", shape_.accTy, 2, false);
    arrivals_ = workspace("merge_arrivals", Ty::I64, 1, true);
  }

  StmtP lower() {
    std::vector<StmtP> body;
    ExprP tid = gpuIndex(GpuIndexKind::ThreadX);
    n_ = let(body, "rows", cast(loop_.b, Ty::I64));
    base_ = let(body, "base", offsetAt(cInt(0)));
    ExprP nnz = let(body, "nonzeros", sub(offsetAt(n_), base_));
    ExprP items = let(body, "items", add(n_, nnz));
    ExprP threads = mul(gpuIndex(GpuIndexKind::GridDimX), gpuIndex(GpuIndexKind::BlockDimX));
    ExprP share = div(add(items, sub(threads, cInt(1))), threads);
    perWarp_ = let(body, "per_warp", mul(smax(share, cInt(kMergeRound)), cInt(32)));
    lane_ = let(body, "lane", rem(tid, cInt(32)));
    warp_ = let(body, "warp", div(add(mul(gpuIndex(GpuIndexKind::BlockX), gpuIndex(GpuIndexKind::BlockDimX)), tid), cInt(32)));
    ExprP first = let(body, "first", mul(warp_, perWarp_));
    // A warp past the last item has nothing to do (the kernel has no block barrier).
    std::vector<StmtP> work;
    ExprP last = let(work, "last", smin(add(first, perWarp_), items));
    search(work, first, last, nnz);
    ExprP posW0 = let(work, "first_position", sub(first, rowW0_));
    ExprP posW1 = let(work, "end_position", sub(last, rowW1_));
    // The warp's first row began in an earlier warp.
    ExprP startW0 = let(work, "first_row_start", rowStart(rowW0_));
    ExprP continued = let(work, "continued", both(lt(rowW0_, n_), bin(BinOp::Gt, posW0, startW0)), Ty::I1);
    // Rows rowW0 .. rowW1: all end here but the last, which only has nonzeros here (or none).
    ExprP rows = let(work, "warp_rows", add(sub(rowW1_, rowW0_), cInt(1)));
    ExprP perRow = div(add(sub(posW1, posW0), sub(rows, cInt(1))), rows);
    ExprP perLane = let(work, "per_lane", div(add(perRow, cInt(reads_ - 1)), cInt(reads_)));
    ExprP width = let(work, "width", lanesCovering(perLane));
    ExprP rowsAtOnce = let(work, "rows_at_once", div(cInt(32), width));
    ExprP laneOfRow = let(work, "lane_of_row", rem(lane_, width));
    ExprP rowOfLane = let(work, "row_of_lane", div(lane_, width));
    // The parts of the two rows that may cross warps, kept by the lane that summed them.
    ExprP firstPart = let(work, "first_part", combineIdentity(shape_), shape_.accTy);
    ExprP lastPart = let(work, "last_part", combineIdentity(shape_), shape_.accTy);

    // With prefetching, a step's row ends were loaded by the step before (the first step's
    // here), and the step loads the next step's before reading its own row: the offsets' load
    // leaves the chain of dependent loads (offsets, then columns, then x) that each step waits
    // on.
    ExprP nextStart, nextEnd;
    if (prefetch_) {
      ExprP lanesFirst = add(rowW0_, rowOfLane);
      nextStart = let(work, "next_row_start", rowStart(lanesFirst));
      nextEnd = let(work, "next_row_end", rowEnd(lanesFirst));
    }
    int stepVar = fresh();
    std::vector<StmtP> step;
    ExprP j = let(step, "warp_row", add(var(stepVar, Ty::I64), rowOfLane));
    ExprP r = let(step, "row", add(rowW0_, j));
    ExprP valid = let(step, "valid", both(lt(j, rows), lt(r, n_)), Ty::I1);
    ExprP start = let(step, "row_start", prefetch_ ? nextStart : rowStart(r));
    ExprP end = let(step, "row_end", prefetch_ ? nextEnd : rowEnd(r));
    if (prefetch_) {
      ExprP following = add(r, rowsAtOnce);
      step.push_back(assignVar(nextStart->var, rowStart(following)));
      step.push_back(assignVar(nextEnd->var, rowEnd(following)));
    }
    ExprP lo = let(step, "lo", sel(valid, smax(start, posW0), cInt(0)));
    ExprP hi = let(step, "hi", sel(valid, smin(end, posW1), cInt(0)));
    // A row needing more than longSteps_ steps of its W lanes (a hub among the warp's short
    // rows) would hold the whole warp that long: it is left out of the side-by-side pass and
    // summed afterwards by all 32 lanes.
    ExprP isLong = cInt(0, Ty::I1);
    if (longSteps_ > 0)
      isLong = let(step, "long_row", both(lt(width, cInt(32)), bin(BinOp::Gt, sub(hi, lo), mul(width, cInt(reads_ * longSteps_)))),
                   Ty::I1);
    ExprP sideHi = longSteps_ > 0 ? let(step, "side_hi", sel(isLong, lo, hi)) : hi;
    ExprP acc = let(step, "acc", combineIdentity(shape_), shape_.accTy);
    int k0 = fresh();
    StmtP reads = lanesReads(acc, width, sideHi, var(k0, Ty::I64));
    step.push_back(steppedLoop(k0, "nonzeros", add(lo, laneOfRow), sideHi, mul(width, cInt(reads_)), reads));
    // The row's W lanes combine; its first lane has the sum.
    step.push_back(combineOver(acc, width));
    if (longSteps_ > 0) step.push_back(longRows(both(isLong, isZero(laneOfRow)), lo, hi, acc));
    ExprP isFirst = both(continued, isZero(j));
    step.push_back(ifThen(both(valid, isZero(laneOfRow)),
                          ifThen(isFirst, assignVar(firstPart->var, acc),
                                 ifThen(eq(r, rowW1_), assignVar(lastPart->var, acc), finishRow(r, acc)))));
    work.push_back(steppedLoop(stepVar, "warp_step", cInt(0), rows, rowsAtOnce, block(step)));

    // Rows across warps: the part of the warp's first row (when it began earlier; when the
    // warp lies inside that one row, all of the warp's part), and the part of the row the warp
    // ends in (when it has nonzeros here and goes on). Row j of the warp was summed by lane
    // (j mod 32/W) * W.
    ExprP slotOfFirst = let(work, "first_carry", mul(warp_, cInt(2)));
    work.push_back(ifThen(continued, crossWarpPart(rowW0_, warpShuffle(ShuffleKind::Index, firstPart, cInt(0), cInt(32)), slotOfFirst)));
    ExprP startW1 = let(work, "last_row_start", rowStart(rowW1_));
    ExprP lastGoesOn = both(lt(rowW1_, n_), bin(BinOp::Gt, posW1, startW1));
    ExprP holder = mul(rem(sub(rows, cInt(1)), rowsAtOnce), width);
    work.push_back(ifThen(both(lastGoesOn, un(ast::UnOp::Not, both(continued, eq(rowW1_, rowW0_)))),
                          crossWarpPart(rowW1_, warpShuffle(ShuffleKind::Index, lastPart, holder, cInt(32)), add(slotOfFirst, cInt(1)))));
    body.push_back(ifThen(lt(first, items), block(work)));

    auto kernel = std::make_shared<Stmt>(*gpuKernel(loop_.name, GpuRowMapping::Merge, nullptr, kMergeBlock, block(body)));
    kernel->knobs = knobs_;
    return kernel;
  }

 private:
  Function &f_;
  int &next_;
  const Stmt &loop_;
  RowShape shape_;
  Ty offsetsTy_ = Ty::I32;
  int64_t reads_ = 1;
  int64_t longSteps_ = kMergeLongRowSteps;
  bool prefetch_ = true;
  ast::GpuRowKnobs knobs_;
  int carries_ = -1, arrivals_ = -1;
  ExprP n_, base_, perWarp_, lane_, warp_, rowW0_, rowW1_;

  int fresh() { return next_++; }

  /// A fresh variable declared in `out` with `value`; returns its use.
  ExprP let(std::vector<StmtP> &out, const std::string &name, ExprP value, Ty t = Ty::I64) {
    int v = fresh();
    out.push_back(decl(v, name, t, std::move(value)));
    return var(v, t);
  }

  int workspace(const std::string &name, Ty elem, int64_t perWarp, bool arrivals) {
    Buffer b;
    b.id = f_.freshBufferId();
    b.name = name;
    b.elem = elem;
    b.perWarp = perWarp;
    b.arrivals = arrivals;
    f_.buffers.push_back(b);
    return b.id;
  }

  /// offsets[i] as an i64.
  ExprP offsetAt(const ExprP &i) const { return cast(load(shape_.offsets, i, offsetsTy_), Ty::I64); }
  /// Where row r's nonzeros start and end among the positions (rows past the last read the end).
  ExprP rowStart(const ExprP &r) const { return sub(offsetAt(smin(r, n_)), base_); }
  ExprP rowEnd(const ExprP &r) const { return sub(offsetAt(smin(add(r, cInt(1)), n_)), base_); }

  /// acc op v, the row's own combining operator on an accumulator of this lowering.
  ExprP combined(const ExprP &acc, const ExprP &v) const {
    return substituteVar(substituteVar(shape_.combine, shape_.acc, acc), kShuffled, v);
  }
  StmtP combineInto(const ExprP &acc, const ExprP &v) const { return assignVar(acc->var, combined(acc, v)); }
  /// acc combined over groups of `lanes` lanes (the group's first lane has the result).
  StmtP combineOver(const ExprP &acc, const ExprP &lanes) {
    int other = fresh();
    return warpReduce(acc->var, other, lanes, combined(acc, var(other, shape_.accTy)));
  }

  /// The coordinates of items `first` and `last`: rowW0_ and rowW1_, the rows before them (the
  /// nonzeros before are the item less its row), the same in every lane. Item d's row is the
  /// first r with offs[r+1] - offs[0] > d - r - 1. Lanes 0-15 search for `first`, 16-31 for
  /// `last`: in each step the 16 lanes of a half read the row ends at 16 pivots spread over
  /// their interval, and the interval shrinks about 17 times. log17(n) steps (5 for a million
  /// rows) of one memory latency each: a binary search took log2(n) such steps (20), 5 us or
  /// more at the start of every warp on an H200. The interval shrinks in every step whatever
  /// the offsets hold, so the search ends on any input.
  void search(std::vector<StmtP> &out, const ExprP &first, const ExprP &last, const ExprP &nnz) {
    ExprP upper = let(out, "upper_half", bin(BinOp::Ge, lane_, cInt(16)), Ty::I1);
    ExprP pivotOfLane = let(out, "pivot_of_lane", rem(lane_, cInt(16)));
    ExprP d = let(out, "item", sel(upper, last, first));
    ExprP lo = let(out, "search_lo", smax(sub(d, nnz), cInt(0)));
    ExprP hi = let(out, "search_hi", smin(d, n_));
    std::vector<StmtP> round;
    // Pivot j of 16: lo + (hi - lo) (j + 1) / 17, in [lo, hi) while the interval is open.
    ExprP pivot = let(round, "pivot", add(lo, div(mul(sub(hi, lo), add(pivotOfLane, cInt(1))), cInt(17))));
    ExprP active = let(round, "open", lt(lo, hi), Ty::I1);
    ExprP rowEnd = let(round, "pivot_end", sub(offsetAt(sel(active, add(pivot, cInt(1)), cInt(0))), base_));
    ExprP past = both(active, bin(BinOp::Gt, rowEnd, sub(sub(d, pivot), cInt(1))));
    // k: the first pivot past the answer (16: none), the answer in (pivot k-1, pivot k]. Past
    // pivots follow the others (row ends grow, d - pivot shrinks), so k counts the others.
    ExprP k = let(round, "first_past", warpVote(VoteKind::Count, un(ast::UnOp::Not, past), cInt(16)));
    ExprP below = warpShuffle(ShuffleKind::Index, pivot, sub(smax(k, cInt(1)), cInt(1)), cInt(16));
    ExprP above = warpShuffle(ShuffleKind::Index, pivot, smin(k, cInt(15)), cInt(16));
    ExprP newLo = let(round, "new_lo", sel(isZero(k), lo, add(below, cInt(1))));
    ExprP newHi = let(round, "new_hi", sel(eq(k, cInt(16)), hi, above));
    round.push_back(assignVar(lo->var, sel(active, newLo, lo)));
    round.push_back(assignVar(hi->var, sel(active, newHi, hi)));
    out.push_back(whileLoop(bin(BinOp::Ne, warpVote(VoteKind::Count, lt(lo, hi), cInt(32)), cInt(0)), block(round)));
    rowW0_ = let(out, "first_row", warpShuffle(ShuffleKind::Index, lo, cInt(0), cInt(32)));
    rowW1_ = let(out, "last_row", warpShuffle(ShuffleKind::Index, lo, cInt(16), cInt(32)));
  }

  /// A lane's reads of its row at k0, k0 + W, ..., `reads_` of them issued together (each
  /// read's position and contribution declared before any is combined); a read past the row's
  /// end `hi` reads position k0 again and counts the identity.
  StmtP lanesReads(const ExprP &acc, const ExprP &width, const ExprP &hi, const ExprP &k0) {
    std::vector<StmtP> reads;
    std::vector<ExprP> parts;
    for (int64_t u = 0; u < reads_; ++u) {
      // The first read is inside the row (the loop's condition).
      ExprP k = add(k0, mul(width, cInt(u)));
      ExprP inside = u == 0 ? nullptr : let(reads, "inside", lt(k, hi), Ty::I1);
      ExprP part = let(reads, "part", combineIdentity(shape_), shape_.accTy);
      std::vector<StmtP> read;
      ExprP position = u == 0 ? k0 : let(read, "position", sel(inside, k, k0));
      for (const StmtP &d : shape_.perNonzero) read.push_back(substituteVar(d, kPosition, position));
      ExprP value = let(read, "value", cast(substituteVar(shape_.contribution, kPosition, position), shape_.accTy), shape_.accTy);
      read.push_back(assignVar(part->var, inside ? sel(inside, value, combineIdentity(shape_)) : value));
      reads.push_back(block(read));
      parts.push_back(part);
    }
    for (const ExprP &part : parts) reads.push_back(combineInto(acc, part));
    return block(reads);
  }

  /// The step's long rows, one at a time on all 32 lanes: while a lane still holds one
  /// (`pending`, on the row's first lane), the lowest such lane's range [lo, hi) is
  /// broadcast, the warp reads it 32 x R positions at a time, and its sum becomes that lane's
  /// `acc`, as if its W lanes had summed it.
  StmtP longRows(const ExprP &pendingNow, const ExprP &lo, const ExprP &hi, const ExprP &acc) {
    std::vector<StmtP> out;
    ExprP pending = let(out, "pending", pendingNow, Ty::I1);
    std::vector<StmtP> each;
    ExprP candidate = let(each, "leader", sel(pending, lane_, cInt(32)));
    int other = fresh();
    each.push_back(warpReduce(candidate->var, other, cInt(32), smin(candidate, var(other, Ty::I64))));
    ExprP leader = let(each, "leader_lane", warpShuffle(ShuffleKind::Index, candidate, cInt(0), cInt(32)));
    ExprP from = let(each, "long_lo", warpShuffle(ShuffleKind::Index, lo, leader, cInt(32)));
    ExprP to = let(each, "long_hi", warpShuffle(ShuffleKind::Index, hi, leader, cInt(32)));
    ExprP sum = let(each, "long_acc", combineIdentity(shape_), shape_.accTy);
    int k = fresh();
    each.push_back(steppedLoop(k, "long_nonzeros", add(from, lane_), to, cInt(32 * reads_), lanesReads(sum, cInt(32), to, var(k, Ty::I64))));
    each.push_back(combineOver(sum, cInt(32)));
    ExprP total = let(each, "long_sum", warpShuffle(ShuffleKind::Index, sum, cInt(0), cInt(32)), shape_.accTy);
    each.push_back(ifThen(eq(lane_, leader), block({assignVar(acc->var, total), assignVar(pending->var, cInt(0, Ty::I1))})));
    out.push_back(whileLoop(bin(BinOp::Ne, warpVote(VoteKind::Count, pending, cInt(32)), cInt(0)), block(each)));
    return block(out);
  }

  /// Row r's result from the sum v of its contributions: its declarations (the accumulator's
  /// initial value op v), then its suffix (what the row loop does after its reduction).
  StmtP finishRow(const ExprP &r, const ExprP &v) const {
    std::vector<StmtP> out{decl(loop_.var, loop_.name, loop_.a->type, cast(r, loop_.a->type))};
    bool accDeclared = false;
    for (const StmtP &d : shape_.prefix) {
      if (d->var != shape_.acc) {
        out.push_back(d);
        continue;
      }
      accDeclared = true;
      if (!d->a) {
        out.push_back(decl(shape_.acc, d->name, shape_.accTy, v));
        continue;
      }
      out.push_back(decl(shape_.acc, d->name, shape_.accTy, cast(d->a, shape_.accTy)));
      out.push_back(combineInto(var(shape_.acc, shape_.accTy), v));
    }
    if (!accDeclared) out.push_back(decl(shape_.acc, "acc", shape_.accTy, v));
    out.insert(out.end(), shape_.suffix.begin(), shape_.suffix.end());
    return block(out);
  }

  /// The warp's part `value` of row r, which crosses warps (step 3); the same in every lane.
  /// Lane 0 stores it in carry `slot` and counts the warp on the row's first warp's counter;
  /// the warp that completes the count sums the row's carries, its lanes striding over them,
  /// then a WarpReduce (a fixed order).
  StmtP crossWarpPart(const ExprP &r, const ExprP &value, const ExprP &slot) {
    std::vector<StmtP> out;
    ExprP part = let(out, "carry", value, shape_.accTy);
    ExprP t0 = let(out, "first_warp", div(add(r, rowStart(r)), perWarp_));
    ExprP t1 = let(out, "last_warp", div(add(r, rowEnd(r)), perWarp_));
    ExprP count = let(out, "arrived", cInt(0));
    out.push_back(ifThen(isZero(lane_), block({store(carries_, slot, part), fence(), arrive(count->var, arrivals_, t0)})));
    ExprP arrived = cast(warpShuffle(ShuffleKind::Index, cast(count, Ty::I32), cInt(0), cInt(32)), Ty::I64);
    std::vector<StmtP> complete{fence()};
    // Lane 0 starts from carry 2 t0 + 1 (the row's first warp); lane j then adds carries 2t
    // for t = t0 + 1 + j, t0 + 33 + j, ...
    ExprP sum = let(complete, "sum", combineIdentity(shape_), shape_.accTy);
    complete.push_back(ifThen(isZero(lane_), assignVar(sum->var, loadVolatile(carries_, add(mul(t0, cInt(2)), cInt(1)), shape_.accTy))));
    int t = fresh();
    complete.push_back(steppedLoop(t, "carries", add(add(t0, cInt(1)), lane_), add(t1, cInt(1)), cInt(32),
                                   combineInto(sum, loadVolatile(carries_, mul(var(t, Ty::I64), cInt(2)), shape_.accTy))));
    complete.push_back(combineOver(sum, cInt(32)));
    complete.push_back(ifThen(isZero(lane_), finishRow(r, sum)));
    out.push_back(ifThen(eq(arrived, add(sub(t1, t0), cInt(1))), block(complete)));
    return block(out);
  }
};

}  // namespace

int lowerMergeRows(Function &f, const GpuRowOptions &opts) {
  if (!f.cuda) return 0;
  int lowered = 0;
  int nextVar = f.freshVarId();
  rewriteTopLevel(f, [&](const StmtP &s) -> StmtP {
    if (!isMergeLoop(*s)) return s;
    ++lowered;
    return MergeRows(f, nextVar, *s, opts).lower();
  });
  return lowered;
}

}  // namespace spl::loopir
