/// \file TypesPrinter.cpp: `splc --emit=types`.
/// For each def of the main file: its signature with every parameter's type, each call site
/// with the callee's implicit arguments resolved and the type of the result, and the nat
/// subtractions (and take/drop bounds) that could not be proved non-negative. Then each export
/// with the tunables it depends on and its C prototypes.
#include "tir/TypesPrinter.h"

#include <fmt/ranges.h>

#include "support/Format.h"
#include "tir/Abi.h"

namespace spl::tir {

std::string typeArguments(const Export &e) {
  std::vector<std::string> args;
  if (e.typeArgs.empty() && e.natArgs.empty()) return "";
  for (const tir::DefParam &q : e.def->params)
    if (q.sort == tir::DefParam::Data) {
      auto it = e.typeArgs.find(q.typeVar->id);
      args.push_back(fmt::format("{} = {}", q.name, it != e.typeArgs.end() ? types::str(it->second) : "?"));
    } else if (q.sort == tir::DefParam::Nat) {
      if (auto it = e.natArgs.find(q.natVar.id); it != e.natArgs.end()) args.push_back(fmt::format("{} = {}", q.name, it->second));
    }
  return fmt::format("{}", fmt::join(args, ", "));
}

std::string printTypes(const Program &p, const SourceManager &, int indexBits, bool checked) {
  TextOut out;
  // The tunables with the values this compilation uses (after -D) and their choices: what
  // tools/spl-tune searches.
  for (const tir::Tunable &t : p.tunables) {
    out("tunable {}: nat = {}", t.name, t.value);
    if (!t.choices.empty()) out(" in [{}]", fmt::join(t.choices, ", "));
    out("\n");
  }
  for (const tir::DefP &d : p.defs) {
    out("def {}", d->name);
    for (const tir::DefParam &q : d->params) {
      std::string type = q.sort == tir::DefParam::Nat    ? "nat"
                         : q.sort == tir::DefParam::Nats ? "nats"
                         : q.sort == tir::DefParam::Data ? "data"
                                                         : types::str(q.value->type);
      out(" {}{}: {}{}", q.implicit ? "{" : "(", q.name, type, q.implicit ? "}" : ")");
    }
    out(" : {}\n", types::str(d->result));
    for (const tir::CallRecord &c : d->calls) {
      out("  {}:{} {}", c.loc.line, c.loc.col, c.callee);
      if (!c.implicits.empty()) {
        std::vector<std::string> implicits;
        for (const tir::CallRecord::Implicit &i : c.implicits)
          implicits.push_back(fmt::format("{} = {}", i.name, i.isType ? types::str(i.type) : i.nat.str()));
        out(" {{{}}}", fmt::join(implicits, ", "));
      }
      if (c.result) out(" : {}", types::str(c.result));
      out("\n");
    }
    for (const auto &[loc, what] : d->unproven) out("  {}:{} not shown non-negative: {}\n", loc.line, loc.col, what);
  }
  for (const tir::Export &e : p.exports) {
    out("export {}", e.def->name);
    if (!e.typeArgs.empty() || !e.natArgs.empty()) out("({})", typeArguments(e));
    out(" as {} for{}{}", e.cname, e.cpu ? " cpu" : "", e.cuda ? " cuda" : "");
    std::vector<std::string> with;
    static const char *const viewNames[] = {"inc", "colmajor", "rowmajor"};
    for (const tir::Export::View &v : e.views)
      with.push_back(fmt::format("{}: {}({})", e.def->params[static_cast<size_t>(v.defParam)].name, viewNames[v.kind], v.stride));
    if (!e.resultInto.empty()) {
      std::vector<std::string> names;
      for (int q : e.resultInto) names.push_back(e.def->params[static_cast<size_t>(q)].name);
      with.push_back(fmt::format(names.size() == 1 ? "result in {}" : "result in ({})", fmt::join(names, ", ")));
    }
    if (!with.empty()) out(" with {}", fmt::join(with, ", "));
    out("\n");
    if (!e.def->tunables.empty()) out("  tunables {}\n", fmt::join(e.def->tunables, " "));
    try {
      tir::Abi abi = tir::computeAbi(e, indexBits, checked);
      if (e.cpu) out("  {};\n", tir::prototype(e, abi, false, false));
      if (e.cpu && abi.hasSizeFunction) out("  {};\n", tir::prototype(e, abi, false, true));
      if (e.cuda) out("  {};\n", tir::prototype(e, abi, true, false));
      if (e.cuda && abi.hasSizeFunction) out("  {};\n", tir::prototype(e, abi, true, true));
    } catch (const std::exception &ex) {
      out("  (no C ABI: {})\n", ex.what());
    }
  }
  return out.str();
}

}  // namespace spl::tir
