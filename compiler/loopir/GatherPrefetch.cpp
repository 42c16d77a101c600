/// \file GatherPrefetch.cpp: a schedule's prefetch(k, d) on a segment loop (see the header).
#include "loopir/GatherPrefetch.h"

#include <map>
#include <set>
#include <vector>

#include "loopir/Visitor.h"

namespace spl::loopir {

namespace {

/// A stream a segment loop reads at base + k (k its variable) and declares a variable from:
/// `var j = init`, init reading stream[base + k].
struct IndexStream {
  int var = 0;
  ExprP init, base;
};

/// The declarations of `body` (a segment loop's, variable k) that read a buffer at base + k
/// (a plain one, or a field of a struct buffer: CSR's (value, column) pairs).
std::vector<IndexStream> indexStreams(const StmtP &body, int k) {
  std::vector<IndexStream> found;
  anyStmt(body, [&](const Stmt &s) {
    if (s.kind != StmtKind::Decl || !s.a) return false;
    anyExpr(s.a, [&](const Expr &e) {
      ExprP base;
      if (e.kind == ExprKind::Load && unitStride(e.args[0], k, base)) {
        found.push_back({s.var, s.a, base ? base : cInt(0)});
        return true;
      }
      return false;
    });
    return false;
  });
  return found;
}

/// The reads of `body` whose index goes through variable `v`: (buffer, index), each once.
std::vector<std::pair<int, ExprP>> gathersThrough(const StmtP &body, int v) {
  std::vector<std::pair<int, ExprP>> found;
  class Collect : public Visitor {
   public:
    Collect(int v, std::vector<std::pair<int, ExprP>> &out) : v_(v), out_(out) {}

   protected:
    void visitLoad(const Expr &e) override {
      if (e.field < 0 && mentionsVar(e.args[0], v_)) {
        bool seen = false;
        for (const auto &[buffer, index] : out_) seen = seen || (buffer == e.buffer && sameExpr(index, e.args[0]));
        if (!seen) out_.emplace_back(e.buffer, e.args[0]);
      }
      visitChildren(e);
    }

   private:
    int v_;
    std::vector<std::pair<int, ExprP>> &out_;
  } collect(v, found);
  collect.visit(body);
  return found;
}

/// Does `e` read no variable but `row` and the function's scalar parameters?
bool onlyRowAndParams(const ExprP &e, int row, const std::set<int> &params) {
  return !anyExpr(e, [&](const Expr &x) { return x.kind == ExprKind::Var && x.var != row && !params.count(x.var); });
}

/// The end of a stream, once per row loop and base: a variable declared before the row loop.
struct StreamEnd {
  int var = 0;
  ExprP base;
};

}  // namespace

int insertGatherPrefetches(Function &f) {
  if (f.cuda) return 0;
  std::set<int> params;
  for (const ScalarParam &p : f.scalars) params.insert(p.var);
  std::map<int, std::vector<StreamEnd>> endsOfRow;  // row loop variable -> the ends its gathers need
  int next = f.freshVarId();
  auto endOf = [&](int row, const ExprP &base) {
    for (const StreamEnd &e : endsOfRow[row])
      if (sameExpr(e.base, base)) return e.var;
    endsOfRow[row].push_back({next, base});
    return next++;
  };
  // The loops' variables: a segment's row must be one (a BFS frontier's vertex, a value read
  // from memory, has no loop whose end bounds the stream).
  std::set<int> loopVars;
  anyStmt(f.body, [&](const Stmt &s) {
    if (s.kind == StmtKind::For) loopVars.insert(s.var);
    return false;
  });
  int count = 0;
  f.body = rewriteBottomUp(f.body, [&](const StmtP &s) -> StmtP {
    // Offsets of n + 1 entries (a CSR row's, the caller's), so that the one past the last row
    // is there to read; a LIL row's Sigma prefix (fromZero) or stored lengths give no such end.
    if (s->kind != StmtKind::For || s->gatherAhead <= 0 || !s->segment || s->segment.parent->kind != ExprKind::Var ||
        !loopVars.count(s->segment.parent->var) || !s->segment.ofRow(s->segment.parent->var) || s->segment.fromZero ||
        s->segment.lengths >= 0)
      return s;
    const int row = s->segment.parent->var, k = s->var;
    std::vector<StmtP> hints;
    for (const IndexStream &stream : indexStreams(s->body[0], k)) {
      if (!onlyRowAndParams(stream.base, row, params)) continue;
      std::vector<std::pair<int, ExprP>> gathers;
      for (const auto &gather : gathersThrough(s->body[0], stream.var)) {
        const Buffer *b = f.buffer(gather.first);
        if (b && b->fields.empty()) gathers.push_back(gather);
      }
      if (gathers.empty()) continue;
      // k + d, or the stream's last element's k where that lies beyond it.
      const ExprP end = var(endOf(row, stream.base), Ty::I64);
      const ExprP lastK = bin(BinOp::Sub, bin(BinOp::Sub, end, cInt(1)), stream.base);
      const ExprP ahead = mm(false, bin(BinOp::Add, var(k, Ty::I64), cInt(s->gatherAhead)), lastK);
      const ExprP initAhead = substituteVar(stream.init, k, ahead);
      for (const auto &[buffer, index] : gathers) hints.push_back(prefetch(buffer, substituteVar(index, stream.var, initAhead), -1, 3));
    }
    if (hints.empty()) return s;
    ++count;
    hints.push_back(s->body[0]);
    auto loop = std::make_shared<Stmt>(*s);
    loop->body = {block(std::move(hints))};
    return loop;
  });
  if (endsOfRow.empty()) return count;
  f.body = rewriteBottomUp(f.body, [&](const StmtP &s) -> StmtP {
    if (s->kind != StmtKind::For) return s;
    auto it = endsOfRow.find(s->var);
    if (it == endsOfRow.end()) return s;
    std::vector<StmtP> out;
    for (const StreamEnd &e : it->second) out.push_back(decl(e.var, "gather_end", Ty::I64, substituteVar(e.base, s->var, s->b)));
    out.push_back(s);
    return block(std::move(out));
  });
  return count;
}

}  // namespace spl::loopir
