/// \file ScheduleCommand.cpp: typed schedule commands from parsed ones (see the header); the
/// registry of the primitives, one line each.
#include "tir/ScheduleCommand.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>

namespace spl::tir {
namespace {

bool isName(const ast::ScheduleCmd &c, size_t k) { return k < c.args.size() && c.args[k]->op == ast::ExprOp::Var; }
bool isIntLit(const ast::ScheduleCmd &c, size_t k) { return k < c.args.size() && c.args[k]->op == ast::ExprOp::IntLit; }

/// Argument k as a name (a loop, a new loop, an array); where it is missing or not a name, the
/// command's place.
NameArg nameArg(const ast::ScheduleCmd &c, size_t k) {
  NameArg a;
  a.ok = isName(c, k);
  a.text = a.ok ? c.args[k]->text : "";
  a.loc = k < c.args.size() ? c.args[k]->loc : c.loc;
  return a;
}

/// Argument k as a positive count: an integer literal or a tunable's name (its value, after
/// -D); where it is missing, the command's place.
CountArg countArg(const ast::ScheduleCmd &c, size_t k, const TunableValues &tunables) {
  CountArg a;
  std::optional<int64_t> value;
  if (isIntLit(c, k)) value = c.args[k]->ival;
  else if (isName(c, k))
    if (auto t = tunables.find(c.args[k]->text); t != tunables.end()) value = t->second;
  a.ok = value && *value >= 1;
  a.value = a.ok ? *value : 0;
  a.loc = k < c.args.size() ? c.args[k]->loc : c.loc;
  return a;
}

template <typename T>
T based(const ast::ScheduleCmd &c) {
  T t;
  t.name = c.name;
  t.loc = c.loc;
  t.arity = c.args.size();
  return t;
}

ScheduleCommand split(const ast::ScheduleCmd &c, const TunableValues &tunables) {
  auto s = based<Split>(c);
  s.loop = nameArg(c, 0);
  s.outer = nameArg(c, 1);
  s.inner = nameArg(c, 2);
  s.factor = countArg(c, 3, tunables);
  return s;
}

ScheduleCommand reorder(const ast::ScheduleCmd &c, const TunableValues &tunables) {
  auto r = based<Reorder>(c);
  r.outer = nameArg(c, 0);
  r.inner = nameArg(c, 1);
  return r;
}

ScheduleCommand fuse(const ast::ScheduleCmd &c, const TunableValues &tunables) {
  auto f = based<Fuse>(c);
  f.first = nameArg(c, 0);
  f.second = nameArg(c, 1);
  return f;
}

ScheduleCommand distribute(const ast::ScheduleCmd &c, const TunableValues &tunables) {
  auto d = based<Distribute>(c);
  d.loop = nameArg(c, 0);
  d.at = nameArg(c, 1);
  return d;
}

ScheduleCommand parallelize(const ast::ScheduleCmd &c, const TunableValues &tunables) {
  using Kind = Parallelize::Kind;
  using Races = Parallelize::Races;
  static const std::map<std::string, Kind> kinds = {
      {"cpu_threads", Kind::CpuThreads}, {"serial", Kind::Serial},       {"simd", Kind::Simd},
      {"gpu_block", Kind::GpuBlock},     {"gpu_thread", Kind::GpuThread}, {"gpu_warp", Kind::GpuWarp},
      {"gpu_lane", Kind::GpuLane},       {"gpu_global", Kind::GpuGlobal}};
  static const std::map<std::string, Races> races = {
      {"no_races", Races::NoRaces}, {"ignore_races", Races::IgnoreRaces}, {"atomics", Races::Atomics},
      {"privatize", Races::Privatize}};
  auto p = based<Parallelize>(c);
  p.loop = nameArg(c, 0);
  // A second argument that is not a name leaves the default kind (as written before typing).
  if (isName(c, 1)) p.kindText = c.args[1]->text;
  auto k = kinds.find(p.kindText);
  p.kind = k == kinds.end() ? Kind::Unknown : k->second;
  if (c.args.size() > 2) {
    p.racesText = isName(c, 2) ? c.args[2]->text : "";
    p.racesLoc = c.args[2]->loc;
    auto r = races.find(p.racesText);
    p.races = r == races.end() ? Races::Unknown : r->second;
  }
  return p;
}

ScheduleCommand vectorize(const ast::ScheduleCmd &c, const TunableValues &tunables) {
  auto v = based<Vectorize>(c);
  v.loop = nameArg(c, 0);
  v.arityOk = c.args.size() >= 1 && c.args.size() <= 3;
  v.bitsGiven = c.args.size() >= 2;
  v.vectorsGiven = c.args.size() == 3;
  if (v.bitsGiven) v.bits = countArg(c, 1, tunables);
  if (v.vectorsGiven) v.vectors = countArg(c, 2, tunables);
  return v;
}

ScheduleCommand unroll(const ast::ScheduleCmd &c, const TunableValues &tunables) {
  auto u = based<Unroll>(c);
  u.loop = nameArg(c, 0);
  u.factor = countArg(c, 1, tunables);
  return u;
}

ScheduleCommand scalar(const ast::ScheduleCmd &c, const TunableValues &tunables) {
  auto s = based<Scalar>(c);
  s.loop = nameArg(c, 0);
  s.arityOk = c.args.size() >= 1 && c.args.size() <= 2;
  s.sumsGiven = c.args.size() == 2;
  if (s.sumsGiven) s.sums = countArg(c, 1, tunables);
  return s;
}

ScheduleCommand prefetch(const ast::ScheduleCmd &c, const TunableValues &tunables) {
  auto p = based<Prefetch>(c);
  p.loop = nameArg(c, 0);
  p.distance = countArg(c, 1, tunables);
  return p;
}

ScheduleCommand precompute(const ast::ScheduleCmd &c, const TunableValues &tunables) {
  auto p = based<Precompute>(c);
  p.array = nameArg(c, 0);
  p.array.ok = p.array.ok && c.args.size() == 1;
  return p;
}

ScheduleCommand pos(const ast::ScheduleCmd &c, const TunableValues &tunables) {
  auto p = based<Pos>(c);
  p.loop = nameArg(c, 0);
  p.chunk = nameArg(c, 1);
  p.size = countArg(c, 2, tunables);
  return p;
}

ScheduleCommand tile(const ast::ScheduleCmd &c, const TunableValues &tunables) {
  auto t = based<Tile>(c);
  t.outer = nameArg(c, 0);
  t.inner = nameArg(c, 1);
  t.outerSize = countArg(c, 2, tunables);
  t.innerSize = countArg(c, 3, tunables);
  return t;
}

ScheduleCommand gpuRows(const ast::ScheduleCmd &c, const TunableValues &tunables) {
  auto g = based<GpuRows>(c);
  g.loop = nameArg(c, 0);
  g.mappingLoc = c.args.size() > 1 ? c.args[1]->loc : c.loc;
  if (isName(c, 1)) g.mappingText = c.args[1]->text;
  g.mappingOk = c.args.size() >= 2 && c.args.size() <= 3 && isName(c, 1) && ast::gpuRowMappingFromName(g.mappingText, g.mapping) &&
                g.mapping != ast::GpuRowMapping::Auto;
  if (c.args.size() == 3) {
    const ast::Expr &w = *c.args[2];
    g.widthGiven = true;
    g.widthLoc = w.loc;
    g.widthOk = w.op == ast::ExprOp::IntLit && w.ival >= 1 && w.ival <= 32 && (w.ival & (w.ival - 1)) == 0;
    g.lanes = g.widthOk ? static_cast<int>(w.ival) : 0;
  }
  return g;
}

ScheduleCommand gpuMerge(const ast::ScheduleCmd &c, const TunableValues &tunables) {
  auto g = based<GpuMerge>(c);
  g.loop = nameArg(c, 0);
  g.arityOk = c.args.size() >= 2 && c.args.size() <= 3;
  if (!g.arityOk) return g;
  const ast::Expr &reads = *c.args[1];
  g.readsLoc = reads.loc;
  g.readsOk = reads.op == ast::ExprOp::IntLit &&
              (reads.ival == 1 || reads.ival == 2 || reads.ival == 4 || reads.ival == 8 || reads.ival == 16);
  g.reads = g.readsOk ? static_cast<int>(reads.ival) : 0;
  if (c.args.size() == 3) {
    const ast::Expr &b = *c.args[2];
    g.blocksLoc = b.loc;
    g.blocksOk = b.op == ast::ExprOp::IntLit && b.ival >= 1 && b.ival <= 8;
    g.blocks = g.blocksOk ? static_cast<int>(b.ival) : 0;
  }
  return g;
}

ScheduleCommand plan(const ast::ScheduleCmd &c, const TunableValues &) { return based<Plan>(c); }

/// fp_contract(off | fast) and fp_reassoc(off | fast): a floating-point freedom of the kernel,
/// allowed or not.
template <typename T>
ScheduleCommand fpFreedom(const ast::ScheduleCmd &c, const TunableValues &) {
  auto f = based<T>(c);
  f.argLoc = c.args.size() == 1 ? c.args[0]->loc : c.loc;
  if (isName(c, 0)) f.text = c.args[0]->text;
  f.ok = c.args.size() == 1 && (f.text == "off" || f.text == "fast");
  f.allowed = f.text != "off";
  return f;
}

ScheduleCommand unsupported(const ast::ScheduleCmd &c, const TunableValues &) { return based<Unsupported>(c); }

/// specialize(SIZE OP COUNT) { ... }: the condition read by kind, the block typed as a schedule.
ScheduleCommand specialize(const ast::ScheduleCmd &c, const TunableValues &tunables) {
  auto s = based<Specialize>(c);
  s.blockGiven = c.hasBlock;
  auto block = std::make_shared<ScheduleBlock>();
  block->commands = typedCommands(c.block, tunables);
  s.block = std::move(block);
  SizeCondition &cond = s.condition;
  cond.loc = c.args.empty() ? c.loc : c.args[0]->loc;
  if (c.args.size() != 1) return s;
  const ast::Expr &e = *c.args[0];
  static const ast::BinOp comparisons[] = {ast::BinOp::Lt, ast::BinOp::Le, ast::BinOp::Gt,
                                           ast::BinOp::Ge, ast::BinOp::Eq, ast::BinOp::Ne};
  if (e.op != ast::ExprOp::Binary || e.kids.size() != 2 ||
      std::find(std::begin(comparisons), std::end(comparisons), e.binop) == std::end(comparisons))
    return s;
  // The comparison's two sides, read as a command's arguments are.
  ast::ScheduleCmd sides;
  sides.name = c.name;
  sides.loc = e.loc;
  sides.args = e.kids;
  cond.op = e.binop;
  cond.size = nameArg(sides, 0);
  cond.bound = countArg(sides, 1, tunables);
  cond.ok = cond.size.ok && cond.bound.ok;
  return s;
}

/// The primitives, one line each: the name a block writes and how its arguments are read.
const std::vector<std::pair<const char *, ScheduleCommand (*)(const ast::ScheduleCmd &, const TunableValues &)>> &registry() {
  static const std::vector<std::pair<const char *, ScheduleCommand (*)(const ast::ScheduleCmd &, const TunableValues &)>> commands = {
      {"split", split},
      {"tile", tile},
      {"pos", pos},
      {"reorder", reorder},
      {"fuse", fuse},
      {"distribute", distribute},
      {"parallelize", parallelize},
      {"vectorize", vectorize},
      {"unroll", unroll},
      {"scalar", scalar},
      {"prefetch", prefetch},
      {"precompute", precompute},
      {"gpu_rows", gpuRows},
      {"gpu_merge", gpuMerge},
      {"plan", plan},
      {"fp_contract", fpFreedom<FpContract>},
      {"fp_reassoc", fpFreedom<FpReassoc>},
      {"specialize", specialize},
      {"bound", unsupported},
  };
  return commands;
}

// ---- scripts ----

ScriptCommand makeDense(const ast::ScheduleCmd &c, const TunableValues &tunables) {
  auto m = based<MakeDense>(c);
  m.row = nameArg(c, 0);
  m.column = nameArg(c, 1);
  return m;
}

ScriptCommand skew(const ast::ScheduleCmd &c, const TunableValues &tunables) {
  auto s = based<Skew>(c);
  s.loop = nameArg(c, 0);
  if (c.args.size() > 1) {
    s.offset = c.args[1];
    s.offsetLoc = c.args[1]->loc;
  }
  return s;
}

ScriptCommand reorderLoops(const ast::ScheduleCmd &c, const TunableValues &tunables) {
  auto r = based<ReorderLoops>(c);
  for (size_t k = 0; k < c.args.size(); ++k) r.loops.push_back(nameArg(c, k));
  return r;
}

ScriptCommand tileLoops(const ast::ScheduleCmd &c, const TunableValues &tunables) {
  auto t = based<TileLoops>(c);
  t.outer = nameArg(c, 0);
  t.inner = nameArg(c, 1);
  t.outerSize = countArg(c, 2, tunables);
  t.innerSize = countArg(c, 3, tunables);
  return t;
}

ScriptCommand compact(const ast::ScheduleCmd &c, const TunableValues &tunables) {
  auto k = based<Compact>(c);
  k.loop = nameArg(c, 0);
  k.pad = c.name == "compact_and_pad";
  return k;
}

const std::vector<std::pair<const char *, ScriptCommand (*)(const ast::ScheduleCmd &, const TunableValues &)>> &scriptRegistry() {
  static const std::vector<std::pair<const char *, ScriptCommand (*)(const ast::ScheduleCmd &, const TunableValues &)>> commands = {
      {"make_dense", makeDense}, {"skew", skew}, {"reorder", reorderLoops}, {"tile", tileLoops},
      {"compact", compact},      {"compact_and_pad", compact},
  };
  return commands;
}

}  // namespace

std::vector<ScriptCommand> typedScript(const std::vector<ast::ScheduleCmd> &cmds, const TunableValues &tunables) {
  std::vector<ScriptCommand> out;
  for (const ast::ScheduleCmd &c : cmds) {
    auto found = std::find_if(scriptRegistry().begin(), scriptRegistry().end(), [&](const auto &r) { return c.name == r.first; });
    out.push_back(found != scriptRegistry().end() ? found->second(c, tunables) : ScriptCommand(based<UnknownScriptCommand>(c)));
  }
  return out;
}

const CommandBase &commandBase(const ScriptCommand &c) {
  return std::visit([](const auto &x) -> const CommandBase & { return x; }, c);
}

bool Parallelize::isGpu() const {
  return kind == Kind::GpuBlock || kind == Kind::GpuThread || kind == Kind::GpuWarp || kind == Kind::GpuLane || kind == Kind::GpuGlobal;
}

ScheduleCommand typedCommand(const ast::ScheduleCmd &c, const TunableValues &tunables) {
  if (c.hasBlock && c.name != "specialize") return based<MisplacedBlock>(c);
  for (const auto &[name, build] : registry())
    if (c.name == name) return build(c, tunables);
  return based<UnknownCommand>(c);
}

std::vector<ScheduleCommand> typedCommands(const std::vector<ast::ScheduleCmd> &cmds, const TunableValues &tunables) {
  std::vector<ScheduleCommand> out;
  out.reserve(cmds.size());
  for (const ast::ScheduleCmd &c : cmds) out.push_back(typedCommand(c, tunables));
  return out;
}

const CommandBase &commandBase(const ScheduleCommand &c) {
  return std::visit([](const auto &x) -> const CommandBase & { return x; }, c);
}

void forEachCommand(const std::vector<ScheduleCommand> &commands, const std::function<void(const ScheduleCommand &)> &fn) {
  for (const ScheduleCommand &c : commands) {
    fn(c);
    if (const auto *s = std::get_if<Specialize>(&c)) forEachCommand(s->block->commands, fn);
  }
}

std::string scheduleCommandNames() {
  // "split, tile, ..., plan and fp_contract": the commands that do something.
  std::vector<std::string> names;
  for (const auto &[name, build] : registry())
    if (build != unsupported) names.push_back(name);
  std::string text;
  for (size_t k = 0; k < names.size(); ++k) text += (k == 0 ? "" : k + 1 == names.size() ? " and " : ", ") + names[k];
  return text;
}

}  // namespace spl::tir
