/// \file ScheduleCommand.h: the commands of a `schedule` block, typed (LANGUAGE.md section 9).
/// Takes:      a block's commands as parsed (ast::ScheduleCmd: a name and expressions).
/// Gives:      one ScheduleCommand per command, built once after type checking
///             (check/Checker.cpp): a struct per primitive (Split, Reorder, Fuse, Distribute, Parallelize,
///             Vectorize, Unroll, Scalar, Prefetch, Precompute, Pos, Tile, GpuRows, GpuMerge, Plan, FpContract, FpReassoc,
///             Specialize: a condition and the typed commands of its block) whose fields are its
///             arguments read by kind: a loop or a new name (NameArg), a positive count
///             (CountArg), a parallel kind, a race strategy, a row mapping. Plan takes none. The later stages
///             receive these, never names to dispatch on: poly/UserSchedule applies each by its
///             type (std::visit, so a primitive without an apply does not compile). An argument of
///             the wrong kind is kept as such (its `ok` false, where it stood) and reported when
///             the command applies, in the order the commands and their checks come, with the
///             messages of the loops the kernel has.
///             A new primitive is one struct here, one line in the registry (ScheduleCommand.cpp)
///             and its apply in poly/UserSchedule.cpp.
///             An inspector's block is its conversion script (poly/Inspector.h): every block is
///             also typed as ScriptCommands (MakeDense, Skew, ReorderLoops, TileLoops, Compact),
///             from a registry of its own, and poly/Inspector reads those.
/// Assumes:    nothing of the kernel: whether a named loop exists is the apply's to say.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "ast/Ast.h"
#include "support/Source.h"

namespace spl::tir {

/// An argument that names a loop, a new loop or an array: `ok` when it is a name. Where it
/// stands (a name or not), or the command when it is missing.
struct NameArg {
  bool ok = false;
  std::string text;
  SourceLoc loc;
};

/// An argument that must be a positive count: an integer literal or a tunable's name.
struct CountArg {
  bool ok = false;
  int64_t value = 0;
  SourceLoc loc;
};

/// What every command has: its name as written, where it stands, how many arguments it has.
struct CommandBase {
  std::string name;
  SourceLoc loc;
  size_t arity = 0;
};

/// split(i, io, ii, f): loop i as io over ceil(n / f) and ii over f.
struct Split : CommandBase {
  NameArg loop, outer, inner;
  CountArg factor;
};
/// reorder(i, j): exchange two perfectly nested loops.
struct Reorder : CommandBase {
  NameArg outer, inner;
};
/// fuse(a, b): two loops of one block into one.
struct Fuse : CommandBase {
  NameArg first, second;
};
/// distribute(i, j): loop i split around its statement j into loops over the statements before
/// j, j, and the statements after it.
struct Distribute : CommandBase {
  NameArg loop, at;
};
/// parallelize(i[, KIND[, RACES]]).
struct Parallelize : CommandBase {
  enum class Kind { CpuThreads, Serial, Simd, GpuBlock, GpuThread, GpuWarp, GpuLane, GpuGlobal, Unknown };
  enum class Races { NoRaces, IgnoreRaces, Atomics, Privatize, Unknown };
  NameArg loop;
  Kind kind = Kind::CpuThreads;
  std::string kindText = "cpu_threads";  // as written (the default when absent)
  Races races = Races::NoRaces;
  std::string racesText = "no_races";
  SourceLoc racesLoc;
  bool isGpu() const;
};
/// vectorize(i), vectorize(i, bits) or vectorize(i, bits, vectors): bits, the width of the
/// registers its vectors take (128, 256 or 512; 0 when not given: the target's preference);
/// vectors, how many vectors one step of the loop takes (LLVM's interleave count, 1 to 8; 0 when
/// not given: LLVM's choice).
struct Vectorize : CommandBase {
  NameArg loop;
  CountArg bits, vectors;
  bool bitsGiven = false, vectorsGiven = false, arityOk = true;
};
/// unroll(i, f).
struct Unroll : CommandBase {
  NameArg loop;
  CountArg factor;
};
/// scalar(i[, sums]): loop i runs as one plain scalar loop (no vectors, unrolling or versions
/// of it), its reductions in `sums` partial sums (1 to 8; 1 when not given).
struct Scalar : CommandBase {
  NameArg loop;
  CountArg sums;
  bool sumsGiven = false, arityOk = true;
};
/// prefetch(k, d): loop k's gathers (a read at an index loop k reads from a stream) prefetch
/// the element the stream names d iterations ahead (loopir/GatherPrefetch.h).
struct Prefetch : CommandBase {
  NameArg loop;
  CountArg distance;
};
/// precompute(t): the let-bound array t computed into a temporary (acted on by the lowering).
struct Precompute : CommandBase {
  NameArg array;  // ok only when the command has exactly this one name
};
/// pos(k, c, f): taco's position split of a compressed row loop k into chunks c of f nonzeros.
struct Pos : CommandBase {
  NameArg loop, chunk;
  CountArg size;
};
/// tile(i, j, a, b).
struct Tile : CommandBase {
  NameArg outer, inner;
  CountArg outerSize, innerSize;
};
/// gpu_rows(i, MAPPING[, W]).
struct GpuRows : CommandBase {
  NameArg loop;
  bool mappingOk = false;                // a mapping other than auto
  ast::GpuRowMapping mapping = ast::GpuRowMapping::Auto;
  std::string mappingText;
  SourceLoc mappingLoc;                  // the mapping, or the command when it is missing
  bool widthGiven = false;               // a third argument
  bool widthOk = false;                  // a power of two from 1 to 32
  int lanes = 0;
  SourceLoc widthLoc;
};
/// gpu_merge(i, R[, B]).
struct GpuMerge : CommandBase {
  NameArg loop;
  bool arityOk = false;                  // two or three arguments
  bool readsOk = false;                  // 1, 2, 4, 8 or 16
  int reads = 0;
  SourceLoc readsLoc;
  bool blocksOk = true;                  // absent, or 1 to 8
  int blocks = 0;
  SourceLoc blocksLoc;
};
/// plan(): the export also runs through a plan chosen per matrix at run time (docs/plans.md):
/// NAME_plan and NAME_run beside NAME, choosing between NAME and SELL-C-sigma kernels of the
/// same product compiled into the object. The driver generates them; the apply checks that the
/// export is a CSR SpMV (cin/SpmvPattern.h).
struct Plan : CommandBase {};
/// A floating-point freedom of the kernel, allowed (fast) or not (off).
struct FpFreedom : CommandBase {
  bool ok = false;  // the argument is `off` or `fast`
  bool allowed = true;
  std::string text;
  SourceLoc argLoc;
};
/// fp_contract(off | fast): whether the kernel's products that feed sums become multiply-adds
/// (fast, the command line's --fp-contract default: one rounding for the two) or stay a product
/// and a sum rounded apart (off, as the reference BLAS computes; Halide's strict_float for
/// contraction alone). Reductions keep the grouping their schedule gives them.
struct FpContract : FpFreedom {};
/// fp_reassoc(off | fast): whether LLVM may regroup the kernel's sums (fast, the default: a
/// `reduce` may be summed in vector lanes) or must keep each in the order of its loops (off):
/// where a schedule versions full register tiles from partial ones, LLVM's choice to vectorise
/// a sum along its reduction loop differed between the two (dsyrk T's 4 x 12 tiles on AVX2), so
/// an element's bits depended on the call's shape.
struct FpReassoc : FpFreedom {};
/// specialize's condition: a size of the export (one of its nat parameters, as the C header
/// names it) compared with a positive count, `n < 32`. `ok` when it has that form.
struct SizeCondition {
  bool ok = false;
  NameArg size;
  ast::BinOp op = ast::BinOp::Lt;  // <, <=, >, >=, == or !=
  CountArg bound;
  SourceLoc loc;
};
struct ScheduleBlock;
/// specialize(cond) { commands }: Halide's specialize. The kernel as the commands before it left
/// it is copied; the copy takes the block's commands and runs where `cond` holds; the commands
/// after it go on with the other version. Versions are tried in the order written.
struct Specialize : CommandBase {
  SizeCondition condition;
  bool blockGiven = false;
  std::shared_ptr<const ScheduleBlock> block;  // the block's commands, typed (never null)
};
/// A block of commands after a command other than specialize.
struct MisplacedBlock : CommandBase {};
/// A command the language names but the compiler does not do yet (bound).
struct Unsupported : CommandBase {};
/// A name that is no command.
struct UnknownCommand : CommandBase {};

using ScheduleCommand = std::variant<Split, Reorder, Fuse, Distribute, Parallelize, Vectorize, Unroll, Scalar, Prefetch, Precompute, Pos, Tile, GpuRows, GpuMerge,
                                     Plan, FpContract, FpReassoc, Specialize, MisplacedBlock, Unsupported, UnknownCommand>;

/// The commands of a specialize's block.
struct ScheduleBlock {
  std::vector<ScheduleCommand> commands;
};

/// The typed command of one parsed command (the registry in ScheduleCommand.cpp).
/// A count (CountArg) may name a tunable: `tunables` holds the file's, with their values after -D.
using TunableValues = std::map<std::string, int64_t>;
ScheduleCommand typedCommand(const ast::ScheduleCmd &c, const TunableValues &tunables);
std::vector<ScheduleCommand> typedCommands(const std::vector<ast::ScheduleCmd> &cmds, const TunableValues &tunables);

/// The name and place of any command.
const CommandBase &commandBase(const ScheduleCommand &c);

/// Calls `fn` on every command of `commands` in order, those of specialize's blocks included
/// (after the specialize).
void forEachCommand(const std::vector<ScheduleCommand> &commands, const std::function<void(const ScheduleCommand &)> &fn);

// ---- an inspector's conversion script (poly/Inspector.h) ----------------------------------------
// The block of an `inspect(A)` export is a script, not a schedule: the same block typed as one.

/// make_dense(i, j): the rows and columns of the source as a dense space.
struct MakeDense : CommandBase {
  NameArg row, column;
};
/// skew(d, e): the new loop d = e (affine in the loops) replaces the innermost loop e mentions.
struct Skew : CommandBase {
  NameArg loop;
  ast::ExprP offset;  // e, an expression of the language (null when missing)
  SourceLoc offsetLoc;
};
/// reorder(a, b, ...): every loop once, in the new order.
struct ReorderLoops : CommandBase {
  std::vector<NameArg> loops;
};
/// tile(a, b, sa, sb): two adjacent loops into tiles.
struct TileLoops : CommandBase {
  NameArg outer, inner;
  CountArg outerSize, innerSize;
};
/// compact(x) or compact_and_pad(x): the script's last command.
struct Compact : CommandBase {
  NameArg loop;
  bool pad = false;
};
struct UnknownScriptCommand : CommandBase {};

using ScriptCommand = std::variant<MakeDense, Skew, ReorderLoops, TileLoops, Compact, UnknownScriptCommand>;

std::vector<ScriptCommand> typedScript(const std::vector<ast::ScheduleCmd> &cmds, const TunableValues &tunables);
const CommandBase &commandBase(const ScriptCommand &c);

/// The names of the commands, for the message of an unknown one.
std::string scheduleCommandNames();

}  // namespace spl::tir
