// tir's typed schedule commands (tir/ScheduleCommand.h): a schedule block's commands, read once
// after type checking into one struct per primitive whose fields are its arguments by kind. The
// checker fills tir::Schedule::commands; an argument of the wrong kind is kept as such (`ok`
// false, where it stood) for poly/UserSchedule to report when the command applies.
#include <gtest/gtest.h>

#include <optional>
#include <sstream>
#include <string>
#include <variant>

#include "parse/Parser.h"
#include "support/Diagnostics.h"
#include "tir/ScheduleCommand.h"
#include "check/Checker.h"

namespace spl {
namespace {

const char *kSource = R"(
def rowsums {n: nat} {m: nat} (a: n.m.f32) : n.f32 = a |> map(r => r |> reduce(+, 0.0));
export rowsums as typed_rows for cpu, cuda;
schedule typed_rows for cpu {
  split(i, io, ii, 8); tile(i, j, 0, 4); parallelize(io, cpu_threads, atomics); parallelize(k, warp_drive);
  unroll(ii, 2); precompute(t); pos(k, c, 16); gpu_rows(i, vector, 4); gpu_merge(i, 3); interleave(i); bound(i, 4);
  plan(); plan(i); distribute(i, k); parallelize(i, cpu_threads, privatize);
  fp_contract(off); fp_contract(fast); fp_contract(on); fp_reassoc(off);
}
)";

/// The typed commands of a source's one block (kSource's by default).
std::vector<tir::ScheduleCommand> commands(const char *source = kSource, const CheckOptions &options = {}) {
  SourceManager sm;
  Diagnostics diags(sm);
  uint32_t file = sm.addFile("typed.spl", source);
  std::optional<ast::Module> module = parseFile(sm, file, diags);
  std::optional<tir::Program> program = module ? checkProgram(*module, sm, diags, options) : std::nullopt;
  if (!program || program->schedules.size() != 1) {
    std::ostringstream os;
    diags.flush(os);
    ADD_FAILURE() << "no schedule block: " << os.str();
    return {};
  }
  return program->schedules[0].commands;
}

TEST(TirScheduleCommand, EachCommandIsItsPrimitivesStruct) {
  std::vector<tir::ScheduleCommand> c = commands();
  ASSERT_EQ(c.size(), 19u);
  const auto &split = std::get<tir::Split>(c[0]);
  EXPECT_TRUE(split.loop.ok && split.outer.ok && split.inner.ok && split.factor.ok);
  EXPECT_EQ(split.loop.text, "i");
  EXPECT_EQ(split.inner.text, "ii");
  EXPECT_EQ(split.factor.value, 8);
  // A size of 0 is kept, not valid, where it stands (column 35 of its line).
  const auto &tile = std::get<tir::Tile>(c[1]);
  EXPECT_FALSE(tile.outerSize.ok);
  EXPECT_EQ(tile.outerSize.loc.col, 35u);
  EXPECT_TRUE(tile.innerSize.ok);
  const auto &par = std::get<tir::Parallelize>(c[2]);
  EXPECT_EQ(par.kind, tir::Parallelize::Kind::CpuThreads);
  EXPECT_EQ(par.races, tir::Parallelize::Races::Atomics);
  EXPECT_FALSE(par.isGpu());
  const auto &unknownKind = std::get<tir::Parallelize>(c[3]);
  EXPECT_EQ(unknownKind.kind, tir::Parallelize::Kind::Unknown);
  EXPECT_EQ(unknownKind.kindText, "warp_drive");
  EXPECT_EQ(std::get<tir::Unroll>(c[4]).factor.value, 2);
  EXPECT_EQ(std::get<tir::Precompute>(c[5]).array.text, "t");
  EXPECT_EQ(std::get<tir::Pos>(c[6]).size.value, 16);
  const auto &rows = std::get<tir::GpuRows>(c[7]);
  EXPECT_TRUE(rows.mappingOk);
  EXPECT_EQ(rows.mapping, ast::GpuRowMapping::Vector);
  EXPECT_TRUE(rows.widthGiven && rows.widthOk);
  EXPECT_EQ(rows.lanes, 4);
  const auto &merge = std::get<tir::GpuMerge>(c[8]);
  EXPECT_TRUE(merge.arityOk);
  EXPECT_FALSE(merge.readsOk) << "3 nonzeros a lane is not one of 1, 2, 4, 8, 16";
  EXPECT_EQ(tir::commandBase(c[9]).name, "interleave");
  EXPECT_TRUE(std::holds_alternative<tir::UnknownCommand>(c[9]));
  EXPECT_TRUE(std::holds_alternative<tir::Unsupported>(c[10]));
  // plan() takes no arguments: its apply refuses plan(i) by the arity kept here.
  ASSERT_TRUE(std::holds_alternative<tir::Plan>(c[11]));
  EXPECT_EQ(tir::commandBase(c[11]).arity, 0u);
  ASSERT_TRUE(std::holds_alternative<tir::Plan>(c[12]));
  EXPECT_EQ(tir::commandBase(c[12]).arity, 1u);
  const auto &dist = std::get<tir::Distribute>(c[13]);
  EXPECT_TRUE(dist.loop.ok && dist.at.ok);
  EXPECT_EQ(dist.at.text, "k");
  EXPECT_EQ(std::get<tir::Parallelize>(c[14]).races, tir::Parallelize::Races::Privatize);
  const auto &off = std::get<tir::FpContract>(c[15]);
  EXPECT_TRUE(off.ok);
  EXPECT_FALSE(off.allowed);
  const auto &fast = std::get<tir::FpContract>(c[16]);
  EXPECT_TRUE(fast.ok && fast.allowed);
  // Neither off nor fast: kept, not valid, with its text for the message.
  const auto &on = std::get<tir::FpContract>(c[17]);
  EXPECT_FALSE(on.ok);
  EXPECT_EQ(on.text, "on");
  // fp_reassoc is its own primitive with fp_contract's fields.
  const auto &inOrder = std::get<tir::FpReassoc>(c[18]);
  EXPECT_TRUE(inOrder.ok);
  EXPECT_FALSE(inOrder.allowed);
}

// A count may name a tunable: its value after -D, read from the CPU target where its value does.
TEST(TirScheduleCommand, ACountNamesATunable) {
  const char *source = R"(
tunable B: nat = 16 in [8, 16];
tunable U: nat = cpu_vector_registers / 8;
def rowsums {n: nat} {m: nat} (a: n.m.f32) : n.f32 = a |> map(r => r |> reduce(+, 0.0));
export rowsums as tunable_rows for cpu;
schedule tunable_rows for cpu { split(i, io, ii, B); unroll(ii, U); unroll(ii, V); }
)";
  CheckOptions avx2;
  avx2.cpuVectorRegisters = 16;
  avx2.cpuVectorBits = 256;
  std::vector<tir::ScheduleCommand> c = commands(source, avx2);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_TRUE(std::get<tir::Split>(c[0]).factor.ok);
  EXPECT_EQ(std::get<tir::Split>(c[0]).factor.value, 16);
  EXPECT_EQ(std::get<tir::Unroll>(c[1]).factor.value, 2);
  // A name that is no tunable is kept, not valid, where it stands.
  EXPECT_FALSE(std::get<tir::Unroll>(c[2]).factor.ok);
  EXPECT_EQ(std::get<tir::Unroll>(c[2]).factor.loc.col, 80u);
  CheckOptions avx512 = avx2;
  avx512.cpuVectorRegisters = 32;
  avx512.defines = {{"B", 8}};
  c = commands(source, avx512);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(std::get<tir::Split>(c[0]).factor.value, 8);
  EXPECT_EQ(std::get<tir::Unroll>(c[1]).factor.value, 4);
}

TEST(TirScheduleCommand, TheRegistryNamesTheCommands) {
  EXPECT_EQ(tir::scheduleCommandNames(),
            "split, tile, pos, reorder, fuse, distribute, parallelize, vectorize, unroll, scalar, prefetch, precompute, gpu_rows, gpu_merge, plan, "
            "fp_contract, fp_reassoc and specialize");
}

// specialize(SIZE OP COUNT) { ... }: the condition read by kind (a name and a count, a tunable's
// value too), the block typed as a schedule of its own (a nested specialize in it); a condition of
// another form, or a missing block, kept as such; a block after another command is MisplacedBlock.
TEST(TirScheduleCommand, SpecializeTypesItsConditionAndItsBlock) {
  const char *source = R"(
tunable EDGE: nat = 64;
def rowsums {n: nat} {m: nat} (a: n.m.f32) : n.f32 = a |> map(r => r |> reduce(+, 0.0));
export rowsums as typed_rows for cpu;
schedule typed_rows for cpu {
  specialize(m <= EDGE) { vectorize(k, 256); specialize(n > 3) { unroll(i, 2); } }
  specialize(m + 1);
  vectorize(k) { unroll(k, 2); }
}
)";
  std::vector<tir::ScheduleCommand> c = commands(source);
  ASSERT_EQ(c.size(), 3u);
  const auto *s = std::get_if<tir::Specialize>(&c[0]);
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(s->blockGiven);
  EXPECT_TRUE(s->condition.ok);
  EXPECT_EQ(s->condition.size.text, "m");
  EXPECT_EQ(s->condition.op, ast::BinOp::Le);
  EXPECT_EQ(s->condition.bound.value, 64);
  ASSERT_EQ(s->block->commands.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<tir::Vectorize>(s->block->commands[0]));
  const auto *inner = std::get_if<tir::Specialize>(&s->block->commands[1]);
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->condition.op, ast::BinOp::Gt);
  EXPECT_EQ(inner->condition.bound.value, 3);
  ASSERT_EQ(inner->block->commands.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<tir::Unroll>(inner->block->commands[0]));
  const auto *bad = std::get_if<tir::Specialize>(&c[1]);
  ASSERT_NE(bad, nullptr);
  EXPECT_FALSE(bad->blockGiven);
  EXPECT_FALSE(bad->condition.ok);
  EXPECT_TRUE(std::holds_alternative<tir::MisplacedBlock>(c[2]));
  int visited = 0;
  tir::forEachCommand(c, [&](const tir::ScheduleCommand &) { ++visited; });
  EXPECT_EQ(visited, 6);  // the three, the block's two, the nested block's one
}

}  // namespace
}  // namespace spl
