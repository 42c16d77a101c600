/// \file IrWalk.h: the walks every tree IR of the compiler shares (CIN and the loop IR): a node
/// holds its children in one member, a vector of shared pointers to const nodes (statements'
/// `body`, expressions' `args`). Written once here; each IR names its member (cin/Cin.h,
/// loopir/LoopIr.h: anyStmt, anyExpr, rewriteBottomUp).
/// Takes:      a node (null for none) and the member holding its children.
/// Gives:      whether a predicate holds at or below it (pre-order, stopping at the first), a
///             visit of every node in pre-order, and
///             a rewrite of every node children first that copies only the nodes on a changed
///             path (unchanged subtrees stay shared).
#pragma once

#include <memory>
#include <vector>

namespace spl::ir {

template <typename Node>
using Children = std::vector<std::shared_ptr<const Node>> Node::*;

/// Does `pred` hold for `n` or a node below it (null: no)?
template <typename Node, typename Pred>
bool anyNode(const std::shared_ptr<const Node> &n, const Pred &pred, Children<Node> children) {
  if (!n) return false;
  if (pred(*n)) return true;
  for (const auto &c : (*n).*children)
    if (anyNode(c, pred, children)) return true;
  return false;
}

/// `fn` on `n` and every node below it, in pre-order (null: none); `fn` gets each node's pointer.
template <typename Node, typename Fn>
void forEachNode(const std::shared_ptr<const Node> &n, const Fn &fn, Children<Node> children) {
  if (!n) return;
  fn(n);
  for (const auto &c : (*n).*children) forEachNode(c, fn, children);
}

/// `n` with `rewrite` applied to every node, children first: the node `rewrite` sees already
/// holds its rewritten children; nodes whose children did not change are passed as they are.
template <typename Node, typename Rewrite>
std::shared_ptr<const Node> rewriteNodes(const std::shared_ptr<const Node> &n, const Rewrite &rewrite, Children<Node> children) {
  if (!n) return n;
  std::shared_ptr<Node> copy;
  const auto &kids = (*n).*children;
  for (size_t k = 0; k < kids.size(); ++k) {
    std::shared_ptr<const Node> c = rewriteNodes(kids[k], rewrite, children);
    if (c == kids[k]) continue;
    if (!copy) copy = std::make_shared<Node>(*n);
    ((*copy).*children)[k] = c;
  }
  return rewrite(copy ? std::shared_ptr<const Node>(copy) : n);
}

}  // namespace spl::ir
