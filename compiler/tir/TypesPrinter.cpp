/// \file TypesPrinter.cpp: `splc --emit=types`.
/// For each def of the main file: its signature with every parameter's type, each call site
/// with the callee's implicit arguments resolved and the type of the result, and the nat
/// subtractions (and take/drop bounds) that could not be proved non-negative. Then each export
/// with the tunables it depends on and its C prototypes.
#include "tir/TypesPrinter.h"

#include <sstream>

#include "tir/Abi.h"

namespace spl::tir {

std::string printTypes(const Program &p, const SourceManager &sm, int indexBits, bool checked) {
  std::ostringstream os;
  // The tunables with the values this compilation uses (after -D) and their choices: what
  // tools/spl-tune searches.
  for (const tir::Tunable &t : p.tunables) {
    os << "tunable " << t.name << ": nat = " << t.value;
    if (!t.choices.empty()) {
      os << " in [";
      for (size_t i = 0; i < t.choices.size(); ++i) os << (i ? ", " : "") << t.choices[i];
      os << "]";
    }
    os << "\n";
  }
  for (const tir::DefP &d : p.defs) {
    os << "def " << d->name;
    for (const tir::DefParam &q : d->params) {
      os << " " << (q.implicit ? "{" : "(") << q.name << ": ";
      switch (q.sort) {
        case tir::DefParam::Nat: os << "nat"; break;
        case tir::DefParam::Nats: os << "nats"; break;
        case tir::DefParam::Data: os << "data"; break;
        case tir::DefParam::Value: os << types::str(q.value->type); break;
      }
      os << (q.implicit ? "}" : ")");
    }
    os << " : " << types::str(d->result) << "\n";
    for (const tir::CallRecord &c : d->calls) {
      os << "  " << c.loc.line << ":" << c.loc.col << " " << c.callee;
      if (!c.implicits.empty()) {
        os << " {";
        for (size_t i = 0; i < c.implicits.size(); ++i)
          os << (i ? ", " : "") << c.implicits[i].name << " = "
             << (c.implicits[i].isType ? types::str(c.implicits[i].type) : c.implicits[i].nat.str());
        os << "}";
      }
      if (c.result) os << " : " << types::str(c.result);
      os << "\n";
    }
    for (const auto &[loc, what] : d->unproven)
      os << "  " << loc.line << ":" << loc.col << " not shown non-negative: " << what << "\n";
  }
  for (const tir::Export &e : p.exports) {
    os << "export " << e.def->name;
    if (!e.typeArgs.empty()) {
      os << "(";
      bool first = true;
      for (const tir::DefParam &q : e.def->params)
        if (q.sort == tir::DefParam::Data) {
          auto it = e.typeArgs.find(q.typeVar->id);
          os << (first ? "" : ", ") << q.name << " = " << (it != e.typeArgs.end() ? types::str(it->second) : "?");
          first = false;
        }
      os << ")";
    }
    os << " as " << e.cname << " for" << (e.cpu ? " cpu" : "") << (e.cuda ? " cuda" : "") << "\n";
    if (!e.def->tunables.empty()) {
      os << "  tunables";
      for (const std::string &t : e.def->tunables) os << " " << t;
      os << "\n";
    }
    try {
      tir::Abi abi = tir::computeAbi(e, indexBits, checked);
      if (e.cpu) os << "  " << tir::prototype(e, abi, false, false) << ";\n";
      if (e.cpu && abi.hasSizeFunction) os << "  " << tir::prototype(e, abi, false, true) << ";\n";
      if (e.cuda) os << "  " << tir::prototype(e, abi, true, false) << ";\n";
      if (e.cuda && abi.hasSizeFunction) os << "  " << tir::prototype(e, abi, true, true) << ";\n";
    } catch (const std::exception &ex) {
      os << "  (no C ABI: " << ex.what() << ")\n";
    }
  }
  (void)sm;
  return os.str();
}

}  // namespace spl::tir
