/// \file IrWalk.h: the walks every tree IR of the compiler shares (CIN and the loop IR): a node
/// holds its children in one member, a vector of shared pointers to const nodes (statements'
/// `body`, expressions' `args`). Written once here; each IR names its member (cin/Cin.h,
/// loopir/LoopIr.h: anyStmt, anyExpr, rewriteBottomUp).
/// Takes:      a node (null for none) and the member holding its children.
/// Gives:      whether a predicate holds at or below it (pre-order, stopping at the first), a
///             visit of every node in pre-order, a one-level map of a node's children, and
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

/// `n` (not null) with `fn` applied to each of its children, one level: `n` itself when every
/// child comes back as it was, otherwise a copy holding the new children. The mutators' step
/// (cin/Visitor.h, loopir/Visitor.h).
template <typename Node, typename Fn>
std::shared_ptr<const Node> mapChildren(const std::shared_ptr<const Node> &n, const Fn &fn, Children<Node> children) {
  std::shared_ptr<Node> copy;
  const auto &kids = (*n).*children;
  for (size_t k = 0; k < kids.size(); ++k) {
    std::shared_ptr<const Node> c = fn(kids[k]);
    if (c == kids[k]) continue;
    if (!copy) copy = std::make_shared<Node>(*n);
    ((*copy).*children)[k] = c;
  }
  return copy ? std::shared_ptr<const Node>(copy) : n;
}

/// `n` with `rewrite` applied to every node, children first: the node `rewrite` sees already
/// holds its rewritten children; nodes whose children did not change are passed as they are.
template <typename Node, typename Rewrite>
std::shared_ptr<const Node> rewriteNodes(const std::shared_ptr<const Node> &n, const Rewrite &rewrite, Children<Node> children) {
  if (!n) return n;
  auto below = [&](const std::shared_ptr<const Node> &c) { return rewriteNodes(c, rewrite, children); };
  return rewrite(mapChildren(n, below, children));
}

}  // namespace spl::ir
