/// \file StreamPrefetch.cpp: software prefetch of the arrays a segment loop streams (see the
/// header).
#include "loopir/StreamPrefetch.h"

#include <map>

#include "loopir/SegmentVersioning.h"
#include "loopir/Visitor.h"

namespace spl::loopir {

namespace {

/// The buffers the loop body reads at base + v, with their bases (first found).
void streams(const StmtP &s, int v, std::map<int, ExprP> &out) {
  class Collect : public Visitor {
   public:
    Collect(int v, std::map<int, ExprP> &out) : v_(v), out_(out) {}

   protected:
    void visitLoad(const Expr &e) override {
      ExprP base;
      if (e.field < 0 && !out_.count(e.buffer) && unitStride(e.args[0], v_, base)) out_.emplace(e.buffer, base ? base : cInt(0));
      visitChildren(e);
    }

   private:
    int v_;
    std::map<int, ExprP> &out_;
  } collect(v, out);
  collect.visit(s);
}

/// The segment gather `cur` behind its prefetches, or `cur` itself. `regular` is the variable
/// that tells, at run time, that the rows have like lengths (-1: none, non-temporal only).
StmtP withPrefetches(const StmtP &cur, const Function &f, int regular, int &count) {
  if (!isSegmentGather(*cur)) return cur;
  std::map<int, ExprP> streamed;
  streams(cur->body[0], cur->var, streamed);
  std::vector<StmtP> temporal, nonTemporal;
  for (const auto &[buffer, base] : streamed) {
    const Buffer *b = f.buffer(buffer);
    if (!b || !b->fields.empty()) continue;
    ExprP at = bin(BinOp::Add, bin(BinOp::Add, base, cur->a), cInt(kPrefetchBytes / tyBytes(b->elem)));
    temporal.push_back(prefetch(buffer, at, -1, 3));
    nonTemporal.push_back(prefetch(buffer, at, -1, 0));
  }
  if (temporal.empty()) return cur;
  ++count;
  StmtP hints = regular < 0 ? block(std::move(nonTemporal))
                            : ifThen(var(regular, Ty::I1), block(std::move(temporal)), block(std::move(nonTemporal)));
  // Only short segments: on longer ones the hardware prefetchers keep up and the hints cost.
  return block({ifThen(bin(BinOp::Lt, bin(BinOp::Sub, cur->b, cur->a), cInt(kPrefetchBelow)), hints), cur});
}

/// The row loop's sampling of its rows' lengths into `regular` (see the header):
///   var regular: i1 = false
///   if (hi - lo >= kSampleRowsFrom) {
///     var equal = 0
///     for s in [0, kSamples) { r = lo + s * ((hi - lo - 2) / kSamples)
///       if (offs[r + 1] - offs[r] == offs[r + 2] - offs[r + 1]) equal = equal + 1 }
///     regular = equal * 2 >= kSamples }
StmtP sampleRowLengths(const Stmt &rows, int offsets, Ty offTy, int regular, int equal, int sample, int row) {
  ExprP n = bin(BinOp::Sub, rows.b, rows.a);
  auto offsetAt = [&](int64_t d) { return cast(load(offsets, bin(BinOp::Add, var(row, Ty::I64), cInt(d)), offTy), Ty::I64); };
  ExprP len0 = bin(BinOp::Sub, offsetAt(1), offsetAt(0)), len1 = bin(BinOp::Sub, offsetAt(2), offsetAt(1));
  ExprP stride = bin(BinOp::Div, bin(BinOp::Sub, n, cInt(2)), cInt(kSamples));
  StmtP body = block({decl(row, "sampled_row", Ty::I64, bin(BinOp::Add, rows.a, bin(BinOp::Mul, var(sample, Ty::I64), stride))),
                      ifThen(bin(BinOp::Eq, len0, len1), assignVar(equal, bin(BinOp::Add, var(equal, Ty::I64), cInt(1))))});
  StmtP count = block({decl(equal, "equal_lengths", Ty::I64, cInt(0)),
                       forLoop(sample, "sample", cInt(0), cInt(kSamples), body, LoopKind::Serial),
                       assignVar(regular, bin(BinOp::Ge, bin(BinOp::Mul, var(equal, Ty::I64), cInt(2)), cInt(kSamples)))});
  return block({decl(regular, "regular_rows", Ty::I1, cInt(0, Ty::I1)), ifThen(bin(BinOp::Ge, n, cInt(kSampleRowsFrom)), count)});
}

/// Does `s` hold a segment gather over the rows of loop variable `rowVar`, whose offsets it
/// reads? Its offsets buffer, or -1.
int gatheredOffsets(const StmtP &s, int rowVar) {
  int found = -1;
  anyStmt(s, [&](const Stmt &t) {
    if (t.kind == StmtKind::For && isSegmentGather(t) && t.segment.ofRow(rowVar) && !t.segment.fromZero) found = t.segment.offsets;
    return found >= 0;
  });
  return found;
}

}  // namespace

int insertStreamPrefetches(Function &f) {
  if (f.cuda) return 0;
  int count = 0;
  // The row loops that sample their rows: loops whose own rows' segments are gathered, with
  // their offsets in a plain buffer. Each gets a `regular` variable (and three for its sample);
  // a gather below no such loop (its row is a value read from memory, as a BFS frontier's
  // vertex) keeps non-temporal hints.
  std::map<int, int> regularOfRow;  // row loop variable -> its `regular` variable
  int next = f.freshVarId();
  anyStmt(f.body, [&](const Stmt &l) {
    if (l.kind != StmtKind::For || regularOfRow.count(l.var)) return false;
    int offsets = gatheredOffsets(l.body.empty() ? nullptr : l.body[0], l.var);
    const Buffer *offs = offsets >= 0 ? f.buffer(offsets) : nullptr;
    if (offs && offs->fields.empty()) {
      regularOfRow.emplace(l.var, next);
      next += 4;  // regular, equal, sample, sampled row
    }
    return false;
  });
  f.body = rewriteBottomUp(f.body, [&](const StmtP &s) -> StmtP {
    if (isSegmentGather(*s)) {
      int regular = -1;
      if (s->segment.parent && s->segment.parent->kind == ExprKind::Var && !s->segment.fromZero)
        if (auto it = regularOfRow.find(s->segment.parent->var); it != regularOfRow.end()) regular = it->second;
      return withPrefetches(s, f, regular, count);
    }
    if (s->kind != StmtKind::For) return s;
    auto it = regularOfRow.find(s->var);
    if (it == regularOfRow.end()) return s;
    const int regular = it->second;
    auto choosesHints = [&](const Stmt &t) { return t.kind == StmtKind::If && t.a->kind == ExprKind::Var && t.a->var == regular; };
    if (!anyStmt(s, choosesHints)) return s;  // no gather of its rows got hints
    const int offsets = gatheredOffsets(s->body[0], s->var);
    // Two copies of the row loop: a test of `regular` in every row cost 4-8% on rows of 2 to 7
    // entries (roadNet-CA, thermal2). Rows of like lengths take the t0 hints; rows of random
    // lengths none, nor the test of the row's length before them, which mispredicts there (the
    // header says what was measured).
    auto temporalCopy = rewriteBottomUp(s, [&](const StmtP &t) { return choosesHints(*t) ? t->body[0] : t; });
    auto plainCopy = rewriteBottomUp(s, [&](const StmtP &t) {
      const bool shortRowHints = t->kind == StmtKind::If && !t->body.empty() && t->body[0] && choosesHints(*t->body[0]);
      return shortRowHints ? block({}) : t;
    });
    return block({sampleRowLengths(*s, offsets, f.buffer(offsets)->elem, regular, regular + 1, regular + 2, regular + 3),
                  ifThen(var(regular, Ty::I1), temporalCopy, plainCopy)});
  });
  return count;
}

}  // namespace spl::loopir
