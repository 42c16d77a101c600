/// \file GpuRowStrategy.cpp: the row mapping of each grid loop (see the header).
#include "loopir/GpuRowStrategy.h"

#include <string>

#include "loopir/RowPatterns.h"
#include "loopir/Visitor.h"
#include "support/Error.h"

namespace spl::loopir {
namespace {

using ast::GpuRowMapping;

bool isGridLoop(const Stmt &s) {
  return s.kind == StmtKind::For && (s.loop == LoopKind::GpuGlobal || s.loop == LoopKind::Parallel);
}

/// What the rows of `loop` allow, and why not where they do not.
struct Allowed {
  bool vector = false, segments = false, merge = false, compact = false;
  std::string whyNot(GpuRowMapping m) const {
    switch (m) {
      case GpuRowMapping::Vector:
        return "its rows are not each reduced into one accumulator (declarations, one reduction loop updating "
               "acc = acc op e, then the row's result)";
      case GpuRowMapping::Merge:
        if (!vector) return "its rows are not each reduced into one accumulator over a segment of a compressed level";
        if (!segments) return "its rows are not segments of a compressed level (a merge path splits the nonzeros its offsets give)";
        return "its reduction reads more than the positions of its row's segment (a merge path reads a range of "
               "nonzeros without knowing their rows)";
      case GpuRowMapping::Compact:
        return "its rows do not append what passes a test in order (a counter, a scan guarded by `cnt < LEN && "
               "test` that appends and counts, then a fill up to LEN)";
      default: return "";
    }
  }
};

Allowed allowedFor(const Stmt &loop) {
  Allowed a;
  if (anyStmt(loop.body[0], [](const Stmt &x) { return x.kind == StmtKind::Return; }))
    return a;  // a --checked early return inside: only a thread an iteration keeps its order
  a.vector = rowPattern(loop);
  a.segments = a.vector && rowOffsetsKnown(loop);
  a.merge = a.segments && mergesRows(loop);
  a.compact = !a.vector && compactsRows(loop);
  return a;
}

GpuRowMapping defaultFor(const Stmt &loop, const Allowed &a, const GpuRowOptions &opts) {
  if (loop.userKind) return GpuRowMapping::Thread;  // the user placed it: a thread an iteration
  if (a.merge && opts.mergeByDefault) return GpuRowMapping::Merge;
  if (a.vector) return GpuRowMapping::Vector;
  if (a.compact) return GpuRowMapping::Compact;
  return GpuRowMapping::Thread;
}

bool allows(const Allowed &a, GpuRowMapping m) {
  switch (m) {
    case GpuRowMapping::Thread: return true;
    case GpuRowMapping::Vector: return a.vector;
    case GpuRowMapping::Merge: return a.merge;
    case GpuRowMapping::Compact: return a.compact;
    case GpuRowMapping::Auto: return false;
  }
  return false;
}

std::string asked(const Stmt &loop) {
  return std::string("gpu_rows(") + loop.name + ", " + ast::gpuRowMappingName(loop.rows) + ")";
}

/// A gpu_rows on a loop that is not a top-level grid loop: refused where it was asked.
class NestedRowsRefusal : public Visitor {
 protected:
  void visitFor(const Stmt &s) override {
    if (s.rows != GpuRowMapping::Auto && !(top_ && isGridLoop(s)))
      throw CompileError(s.rowsLoc, asked(s) + ": loop " + s.name +
                                        " does not run as a grid of threads (only an outermost loop mapped to gpu_global "
                                        "maps its rows)");
    if (s.knobs.merge() && !(top_ && isGridLoop(s)))
      throw CompileError(s.knobs.mergeLoc, "gpu_merge(" + s.name + ", ...): loop " + s.name +
                                               " does not run as a grid of threads, so not as a merge path");
    below(s);
  }
  void visitBlock(const Stmt &s) override { visitChildren(s); }  // a block's statements are where it is
  void visitIf(const Stmt &s) override { below(s); }
  void visitWhile(const Stmt &s) override { below(s); }
  void visitGpuKernel(const Stmt &s) override { below(s); }

 private:
  /// What a statement other than a block holds is not at the top level.
  void below(const Stmt &s) {
    bool was = top_;
    top_ = false;
    visitChildren(s);
    top_ = was;
  }
  bool top_ = true;
};

}  // namespace

int chooseGpuRowMappings(Function &f, const GpuRowOptions &opts) {
  if (!f.cuda) return 0;
  NestedRowsRefusal().visit(f.body);
  int mapped = 0;
  auto mapOne = [&](const StmtP &s) -> StmtP {
    if (!isGridLoop(*s)) return s;
    Allowed a = allowedFor(*s);
    auto copy = std::make_shared<Stmt>(*s);
    if (s->rows == GpuRowMapping::Auto) {
      copy->rows = defaultFor(*s, a, opts);
    } else if (!allows(a, s->rows)) {
      throw CompileError(s->rowsLoc, asked(*s) + ": loop " + s->name + " cannot run as " +
                                         ast::gpuRowMappingName(s->rows) + ": " + a.whyNot(s->rows));
    }
    if (copy->knobs.merge() && copy->rows != GpuRowMapping::Merge)
      throw CompileError(copy->knobs.mergeLoc, "gpu_merge(" + s->name + ", ...): loop " + s->name + " runs as " +
                                                   ast::gpuRowMappingName(copy->rows) + ", not as a merge path" +
                                                   (a.merge ? "" : ": " + a.whyNot(GpuRowMapping::Merge)));
    if (copy->rows != GpuRowMapping::Thread) ++mapped;
    return copy;
  };
  rewriteTopLevel(f, mapOne);
  return mapped;
}

}  // namespace spl::loopir
