/// \file StreamPrefetch.cpp: software prefetch of the arrays a segment loop streams (see the
/// header).
#include "loopir/StreamPrefetch.h"

#include <map>

#include "loopir/SegmentVersioning.h"
#include "loopir/Visitor.h"

namespace spl::loopir {

namespace {

/// `index` as base + v (base free of v; null base = 0), or false.
bool unitStride(const ExprP &index, int v, ExprP &base) {
  if (index->kind == ExprKind::Var && index->var == v) {
    base = nullptr;
    return true;
  }
  if (index->kind != ExprKind::Binary || index->binop != BinOp::Add) return false;
  for (int side = 0; side < 2; ++side) {
    const ExprP &rest = index->args[1 - side];
    ExprP inner;
    if (!mentionsVar(rest, v) && unitStride(index->args[side], v, inner)) {
      base = inner ? bin(BinOp::Add, rest, inner) : rest;
      return true;
    }
  }
  return false;
}

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

/// The segment gather `cur` behind its prefetches, or `cur` itself.
StmtP withPrefetches(const StmtP &cur, const Function &f, int &count) {
  if (!isSegmentGather(*cur)) return cur;
  std::map<int, ExprP> streamed;
  streams(cur->body[0], cur->var, streamed);
  std::vector<StmtP> out;
  for (const auto &[buffer, base] : streamed) {
    const Buffer *b = f.buffer(buffer);
    if (!b || !b->fields.empty()) continue;
    ExprP ahead = cInt(kPrefetchBytes / tyBytes(b->elem));
    out.push_back(prefetch(buffer, bin(BinOp::Add, bin(BinOp::Add, base, cur->a), ahead)));
  }
  if (out.empty()) return cur;
  ++count;
  // Only short segments: on longer ones the hardware prefetchers keep up and the hints cost.
  return block({ifThen(bin(BinOp::Lt, bin(BinOp::Sub, cur->b, cur->a), cInt(kPrefetchBelow)), block(std::move(out))), cur});
}

}  // namespace

int insertStreamPrefetches(Function &f) {
  if (f.cuda) return 0;
  int count = 0;
  f.body = rewriteBottomUp(f.body, [&](const StmtP &s) { return withPrefetches(s, f, count); });
  return count;
}

}  // namespace spl::loopir
