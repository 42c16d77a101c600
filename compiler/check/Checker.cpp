/// \file Checker.cpp: modules, declarations, type syntax, metas and unification.
#include "check/Checker.h"

#include <sys/stat.h>

#include <functional>

#include <fmt/ranges.h>

#include "parse/Parser.h"
#include "ast/AstPrinter.h"
#include "check/CNames.h"
#include "check/CheckerImpl.h"

namespace spl {
namespace check {

std::string describe(const TypeP &t) {
  switch (t->kind) {
    case TypeKind::Scalar: return std::string("a scalar of type ") + scalarName(t->scalar);
    case TypeKind::Idx: return "an index";
    case TypeKind::Array: return "an array";
    case TypeKind::Tuple: return "a tuple";
    case TypeKind::DepPair: return "a dependent pair";
    case TypeKind::Var: return "a value of generic type " + t->name;
    case TypeKind::Meta: return "a value of unknown type";
    case TypeKind::Fun: return "a function";
  }
  return "a value";
}

/// The elements of `t` where every length is a constant, times 8 bytes, fit int64 (types
/// with a symbolic length are checked by their callers' sizes at run time).
bool constantByteSizeFits(const TypeP &t) {
  std::function<std::optional<__int128>(const TypeP &)> bytes = [&](const TypeP &x) -> std::optional<__int128> {
    switch (x->kind) {
      case TypeKind::Scalar:
      case TypeKind::Idx: return 8;
      case TypeKind::Array: {
        auto k = x->len.asConst();
        if (!k || types::isDependent(*x)) return std::nullopt;
        auto e = bytes(x->elems[0]);
        if (!e) return std::nullopt;
        __int128 total = static_cast<__int128>(*k) * *e;
        return total > static_cast<__int128>(INT64_MAX) ? static_cast<__int128>(INT64_MAX) + 1 : total;
      }
      case TypeKind::Tuple: {
        __int128 sum = 0;
        for (const TypeP &c : x->elems) {
          auto e = bytes(c);
          if (!e) return std::nullopt;
          sum += *e;
        }
        return sum;
      }
      default: return std::nullopt;
    }
  };
  auto b = bytes(t);
  return !b || *b <= static_cast<__int128>(INT64_MAX);
}

std::string languageTerms(const TypeP &t) {
  if (t->kind == TypeKind::Meta) {
    if (t->numeric == Type::IntLiteral) return "an integer literal";
    if (t->numeric == Type::FloatLiteral) return "a float literal";
    return "a value whose type is not known yet";
  }
  std::string shown = "`" + types::str(t) + "`";
  switch (t->kind) {
    case TypeKind::Tuple: return (t->elems.size() == 2 ? "a pair " : "a tuple ") + shown;
    case TypeKind::Scalar: return shown;
    case TypeKind::Array: return "an array " + shown;
    case TypeKind::Fun: return "a function " + shown;
    default: return describe(t) + " " + shown;
  }
}

void Checker::fail(SourceLoc loc, const std::string &msg) {
  diags_.error(loc, msg);
  throw DefFailed{};
}

void Checker::recordUnproven(SourceLoc loc, const std::string &what) {
  for (const auto &u : unproven_)
    if (u.second == what) return;
  unproven_.emplace_back(loc, what);
}

const Binding *Checker::lookup(const std::string &name) const {
  for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s)
    for (auto b = s->rbegin(); b != s->rend(); ++b)
      if (b->first == name) return &b->second;
  return nullptr;
}

// ---- modules ------------------------------------------------------------------------------------

namespace {

std::string dirOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

/// What is at `p`: nothing, a regular file (a module can be read from it), or something else
/// (a directory, a named pipe that could block the compiler forever, a device).
enum class PathKind { Missing, Regular, Other };
PathKind pathKind(const std::string &p) {
  struct stat st;
  if (::stat(p.c_str(), &st) != 0) return PathKind::Missing;
  return S_ISREG(st.st_mode) ? PathKind::Regular : PathKind::Other;
}

}  // namespace

/// A type alias defined in terms of itself, directly or through others of its module, is an
/// error where it is defined, used or not (a used one recursed until "nested too deeply").
void Checker::reportRecursiveAliases(const ModuleEnv &env) {
  // The aliases of this module that an alias's body names (its own parameters excluded).
  auto named = [&](const ast::TypeDecl &decl) {
    std::vector<std::string> out;
    std::function<void(const ast::TypeSyn &)> walk = [&](const ast::TypeSyn &t) {
      if (t.op == ast::TypeOp::Named && env.aliases.count(t.name) &&
          std::none_of(decl.params.begin(), decl.params.end(), [&](const ast::KindedName &p) { return p.name == t.name; }))
        out.push_back(t.name);
      for (const ast::TypeArgSyn &a : t.args)
        if (a.type) walk(*a.type);
      for (const ast::TypeSynP &e : t.elems)
        if (e) walk(*e);
    };
    if (decl.body) walk(*decl.body);
    return out;
  };
  std::map<std::string, int> state;  // 1: on the current path, 2: done
  std::vector<std::string> path;
  std::function<bool(const std::string &)> visit = [&](const std::string &name) -> bool {
    if (state[name] == 2) return false;
    if (state[name] == 1) {
      std::string cycle;
      for (auto it = std::find(path.begin(), path.end(), name); it != path.end(); ++it) {
        cycle += *it + " -> ";
        recursiveAliases_.insert(env.aliases.at(*it));
      }
      diags_.error(env.aliases.at(name)->loc, "type '" + name + "' is defined in terms of itself (" + cycle + name +
                                                  "); types cannot be recursive");
      return true;
    }
    state[name] = 1;
    path.push_back(name);
    bool found = false;
    for (const std::string &n : named(*env.aliases.at(name)))
      if (!found) found = visit(n);
    path.pop_back();
    state[name] = 2;
    return found;
  };
  for (const auto &[name, decl] : env.aliases) visit(name);
}

ModuleEnv *Checker::loadModule(const ast::Module &m, const std::string &dir) {
  auto env = std::make_unique<ModuleEnv>();
  env->module = &m;
  env->dir = dir;
  for (const auto &t : m.types) {
    if (env->aliases.count(t->name)) {
      diags_.error(t->loc, "type '" + t->name + "' is defined twice");
      diags_.note(env->aliases[t->name]->loc, "first defined here");
    }
    env->aliases[t->name] = t.get();
  }
  reportRecursiveAliases(*env);
  for (const auto &d : m.defs) {
    if (env->defs.count(d->name)) {
      diags_.error(d->loc, "'" + d->name + "' is defined twice");
      diags_.note(env->defs[d->name]->loc, "first defined here");
    }
    env->defs[d->name] = d.get();
  }
  ModuleEnv *raw = env.get();
  envs_.push_back(std::move(env));
  envByPath_[m.path] = raw;
  for (const ast::ImportDecl &im : m.imports) {
    if (ModuleEnv *imp = importModule(im, *raw)) raw->imports.push_back(imp);
  }
  return raw;
}

ModuleEnv *Checker::importModule(const ast::ImportDecl &im, ModuleEnv &from) {
  std::string rel;
  for (size_t i = 0; i < im.path.size(); ++i) rel += (i ? "/" : "") + im.path[i];
  rel += ".spl";
  std::vector<std::string> candidates{from.dir + "/" + rel};
  for (const std::string &d : opts_.includeDirs) candidates.push_back(d + "/" + rel);
  if (!opts_.stdlibDir.empty()) candidates.push_back(opts_.stdlibDir + "/" + rel);
  std::string found, notAFile;
  for (const std::string &c : candidates) {
    PathKind k = pathKind(c);
    if (k == PathKind::Regular) {
      found = c;
      break;
    }
    if (k == PathKind::Other && notAFile.empty()) notAFile = c;
  }
  if (found.empty() && !notAFile.empty()) {
    diags_.error(im.loc, "cannot import module '" + rel.substr(0, rel.size() - 4) + "': '" + notAFile +
                             "' is not a regular file (a directory, a pipe or a device)");
    return nullptr;
  }
  if (found.empty()) {
    std::string where;
    for (size_t i = 0; i < candidates.size(); ++i) where += (i ? ", " : "") + candidates[i];
    diags_.error(im.loc, "cannot find module '" + rel.substr(0, rel.size() - 4) + "' (looked for " + where + ")");
    return nullptr;
  }
  if (auto it = envByPath_.find(found); it != envByPath_.end()) return it->second;
  if (envByPath_.size() > 256) {
    diags_.error(im.loc, "too many imported modules (more than 256)");
    return nullptr;
  }
  std::string text;
  if (!readWholeFile(found, text)) {
    diags_.error(im.loc, "cannot read module '" + rel.substr(0, rel.size() - 4) + "' ('" + found + "')");
    return nullptr;
  }
  uint32_t file = sm_.addFile(found, std::move(text));
  std::optional<ast::Module> parsed = parseFile(sm_, file, diags_);
  if (!parsed) return nullptr;
  importedAsts_.push_back(std::make_unique<ast::Module>(std::move(*parsed)));
  envByPath_[found] = nullptr;  // guards against import cycles while loading
  ModuleEnv *env = loadModule(*importedAsts_.back(), dirOf(found));
  envByPath_[found] = env;
  evaluateTunables(*env);
  return env;
}

bool Checker::hasDef(const std::string &name) {
  if (env_->defs.count(name)) return true;
  for (ModuleEnv *m : env_->imports)
    if (m && m->defs.count(name)) return true;
  return false;
}

tir::DefP Checker::lookupDef(const std::string &name, SourceLoc loc, ModuleEnv **ownerOut) {
  ModuleEnv *owner = nullptr;
  const ast::DefDecl *decl = nullptr;
  if (auto it = env_->defs.find(name); it != env_->defs.end()) {
    owner = env_;
    decl = it->second;
  } else {
    std::vector<ModuleEnv *> found;
    for (ModuleEnv *m : env_->imports)
      if (m && m->defs.count(name) && std::find(found.begin(), found.end(), m) == found.end()) found.push_back(m);
    if (found.size() > 1) {
      diags_.error(loc, "'" + name + "' is ambiguous: it is defined in more than one imported module");
      for (ModuleEnv *m : found) diags_.note(m->defs[name]->loc, "defined here");
      throw DefFailed{};
    }
    if (found.empty()) return nullptr;
    owner = found[0];
    decl = owner->defs[name];
  }
  if (ownerOut) *ownerOut = owner;
  tir::DefP def = checkDef(*owner, *decl);
  usedTunables_.insert(def->tunables.begin(), def->tunables.end());  // a def's tunables are its users' too
  return def;
}

const ast::TypeDecl *Checker::lookupAlias(const std::string &name, SourceLoc loc, ModuleEnv **ownerOut) {
  if (auto it = env_->aliases.find(name); it != env_->aliases.end()) {
    *ownerOut = env_;
    return it->second;
  }
  std::vector<ModuleEnv *> found;
  for (ModuleEnv *m : env_->imports)
    if (m && m->aliases.count(name) && std::find(found.begin(), found.end(), m) == found.end()) found.push_back(m);
  if (found.size() > 1) {
    diags_.error(loc, "type '" + name + "' is ambiguous: it is defined in more than one imported module");
    throw DefFailed{};
  }
  if (found.empty()) return nullptr;
  *ownerOut = found[0];
  return found[0]->aliases[name];
}

// ---- type syntax ----------------------------------------------------------------------------------

int64_t Checker::expandedSize(const ast::TypeSyn &t, const std::map<std::string, int64_t> *aliasParams) {
  const int64_t cap = kMaxTypeNodes + 1;
  auto add = [&](int64_t a, int64_t b) { return std::min(cap, a + b); };
  int64_t size = 1;
  if (t.op == ast::TypeOp::Named) {
    if (aliasParams) {
      // Inside an alias's body only its parameters and other aliases are in scope.
      if (auto it = aliasParams->find(t.name); it != aliasParams->end()) return it->second;
    } else if (lookup(t.name)) {
      return 1;  // a def's type parameter: opaque here
    }
    if (scalarByName(t.name) || t.name == "idx") return 1;
    ModuleEnv *owner = nullptr;
    const ast::TypeDecl *alias = nullptr;
    try {
      alias = lookupAlias(t.name, t.loc, &owner);
    } catch (const DefFailed &) {
      return 1;  // ambiguous: reported when the type is resolved
    }
    if (!alias || recursiveAliases_.count(alias) || alias->params.size() != t.args.size()) return 1;
    if (alias->params.empty())
      if (auto it = aliasSizes_.find(alias); it != aliasSizes_.end()) return it->second;
    std::map<std::string, int64_t> params;
    for (size_t i = 0; i < t.args.size(); ++i)
      params[alias->params[i].name] = t.args[i].type ? expandedSize(*t.args[i].type, aliasParams) : 1;
    if (alias->params.empty()) aliasSizes_[alias] = 1;  // in progress (a cycle counts 1)
    ModuleEnv *saved = env_;
    env_ = owner;
    size = expandedSize(*alias->body, &params);
    env_ = saved;
    if (alias->params.empty()) aliasSizes_[alias] = size;
    return size;
  }
  for (const ast::TypeSynP &e : t.elems)
    if (e) size = add(size, expandedSize(*e, aliasParams));
  return size;
}

TypeP Checker::resolveType(const ast::TypeSyn &t) {
  if (++depth_ > 4000) fail(t.loc, "type nested too deeply");
  struct Leave {
    int &d;
    ~Leave() { --d; }
  } leave{depth_};
  switch (t.op) {
    case ast::TypeOp::Named: {
      if (auto s = scalarByName(t.name)) {
        if (!t.args.empty()) fail(t.loc, "scalar type '" + t.name + "' takes no arguments");
        return types::scalar(*s);
      }
      if (t.name == "idx") {
        if (t.args.size() != 1) fail(t.loc, "idx takes one nat argument: idx[n]");
        const ast::TypeArgSyn &a = t.args[0];
        if (a.nat) return types::idx(resolveNat(*a.nat));
        if (a.type->op == ast::TypeOp::Named && a.type->args.empty()) {
          ast::NatSyn v;
          v.op = ast::NatOp::Var;
          v.loc = a.type->loc;
          v.name = a.type->name;
          return types::idx(resolveNat(v));
        }
        fail(a.loc, "idx expects a nat, found the type `" + ast::printType(*a.type) + "`");
      }
      if (const Binding *b = lookup(t.name)) {
        if (b->kind == Binding::DataVar) {
          if (!t.args.empty()) fail(t.loc, "type variable '" + t.name + "' takes no arguments");
          return b->dataVar;
        }
        fail(t.loc, "'" + t.name + "' is not a type");
      }
      ModuleEnv *owner = nullptr;
      const ast::TypeDecl *alias = lookupAlias(t.name, t.loc, &owner);
      if (!alias) fail(t.loc, "unknown type '" + t.name + "'");
      if (recursiveAliases_.count(alias)) throw DefFailed{};  // reported where it is defined
      if (alias->params.size() != t.args.size())
        fail(t.loc, fmt::format("type '{}' takes {} argument{}, found {}", t.name, alias->params.size(),
                                alias->params.size() == 1 ? "" : "s", t.args.size()));
      if (expandedSize(t, nullptr) > kMaxTypeNodes)
        fail(t.loc, fmt::format("type '{}' is too large: it expands to more than {} parts (do its aliases each pair the one "
                                "before?)",
                                t.name, kMaxTypeNodes));
      // Resolve the arguments here, then the body in the alias's own module with only its
      // parameters in scope. Nat parameters are bound to fresh variables that are substituted
      // by the arguments afterwards (so the body's binders never capture an argument).
      std::vector<Binding> bound;
      NatSubst natArgs;
      for (size_t i = 0; i < t.args.size(); ++i) {
        const ast::KindedName &p = alias->params[i];
        const ast::TypeArgSyn &a = t.args[i];
        Binding b;
        if (p.kind == ast::Kind::Data) {
          if (!a.type) fail(a.loc, "argument '" + p.name + "' of type '" + t.name + "' must be a data type");
          b.kind = Binding::DataVar;
          b.dataVar = resolveType(*a.type);
          bound.push_back(b);
          continue;
        }
        if (p.kind == ast::Kind::Nats) fail(a.loc, "nats parameters of type aliases are not supported yet");
        Nat n;
        if (a.nat) {
          n = resolveNat(*a.nat);
        } else if (a.type->op == ast::TypeOp::Named && a.type->args.empty()) {
          ast::NatSyn v;
          v.op = ast::NatOp::Var;
          v.loc = a.type->loc;
          v.name = a.type->name;
          n = resolveNat(v);
        } else {
          fail(a.loc, "argument '" + p.name + "' of type '" + t.name + "' must be a nat, found the type `" +
                          ast::printType(*a.type) + "`");
        }
        b.kind = Binding::NatVar;
        b.nat = freshNatVar(p.name);
        natArgs.vars.emplace(b.nat.id, n);
        bound.push_back(b);
      }
      auto savedScopes = std::move(scopes_);
      ModuleEnv *savedEnv = env_;
      scopes_.clear();
      push();
      for (size_t i = 0; i < bound.size(); ++i) bind(alias->params[i].name, bound[i]);
      env_ = owner;
      TypeP body;
      try {
        body = resolveType(*alias->body);
      } catch (...) {
        scopes_ = std::move(savedScopes);
        env_ = savedEnv;
        throw;
      }
      scopes_ = std::move(savedScopes);
      env_ = savedEnv;
      return types::substitute(body, natArgs);
    }
    case ast::TypeOp::Array: {
      Nat len = resolveNat(*t.len);
      TypeP elem = resolveType(*t.elems[0]);
      if (auto k = len.asConst(); k && *k < 0)
        fail(t.len->loc, fmt::format("the length of this array is {}, a negative number", *k));
      // A type too large for 64-bit sizes (its elements at 8 bytes each) is refused here rather
      // than wrapping in the offsets computed from it.
      TypeP arr = types::array(len, elem);
      if (!constantByteSizeFits(arr)) fail(t.loc, "this type holds more than 2^63 bytes: `" + types::str(arr) + "`");
      return arr;
    }
    case ast::TypeOp::Packed: {
      TypeP elem = resolveType(*t.elems[0]);
      if (elem->kind != TypeKind::Tuple) fail(t.loc, "a packed array holds tuples, found `" + types::str(elem) + "`");
      return types::array(resolveNat(*t.len), elem, true);
    }
    case ast::TypeOp::DepArray: {
      Nat len = resolveNat(*t.len);
      NatVarId b = freshNatVar(t.name);
      push();
      Binding bd;
      bd.kind = Binding::NatVar;
      bd.nat = b;
      bind(t.name, bd);
      TypeP elem;
      try {
        elem = resolveType(*t.elems[0]);
      } catch (...) {
        pop();
        throw;
      }
      pop();
      return types::array(len, b, elem);
    }
    case ast::TypeOp::Tuple: {
      std::vector<TypeP> es;
      for (const auto &e : t.elems) es.push_back(resolveType(*e));
      return types::tuple(std::move(es));
    }
    case ast::TypeOp::DepPair: {
      NatVarId b = freshNatVar(t.name);
      push();
      Binding bd;
      bd.kind = t.pairKind == ast::Kind::Nats ? Binding::NatsVar : Binding::NatVar;
      bd.nat = b;
      bind(t.name, bd);
      TypeP body;
      try {
        body = resolveType(*t.elems[0]);
      } catch (...) {
        pop();
        throw;
      }
      pop();
      return types::depPair(b, t.pairKind == ast::Kind::Nats, body);
    }
  }
  fail(t.loc, "unsupported type");
}

// Nat arithmetic reports an overflow (a CompileError) without a location; these wrappers give it
// the location of the innermost nat or expression being read.
Nat Checker::resolveNat(const ast::NatSyn &n) {
  try {
    return resolveNatNode(n);
  } catch (const CompileError &err) {
    if (err.loc.valid()) throw;
    fail(n.loc, err.what());
  }
}

Nat Checker::exprToNat(const ast::Expr &e) {
  try {
    return exprToNatNode(e);
  } catch (const CompileError &err) {
    if (err.loc.valid()) throw;
    fail(e.loc, err.what());
  }
}

Nat Checker::resolveNatNode(const ast::NatSyn &n) {
  if (++depth_ > 4000) fail(n.loc, "nat expression nested too deeply");
  struct Leave {
    int &d;
    ~Leave() { --d; }
  } leave{depth_};
  switch (n.op) {
    case ast::NatOp::Lit: return Nat(n.value);
    case ast::NatOp::Var: {
      const Binding *b = lookup(n.name);
      if (b) {
        switch (b->kind) {
          case Binding::NatVar: return Nat::var(b->nat);
          case Binding::Tunable: usedTunables_.insert(n.name); return Nat(b->tunable);
          case Binding::NatsVar: fail(n.loc, "'" + n.name + "' is a nats; use an element of it, e.g. " + n.name + "@i");
          case Binding::DataVar: fail(n.loc, "'" + n.name + "' is a data type, not a nat");
          case Binding::Value: {
            TypeP t = resolve(b->value->type);
            if ((t->kind == TypeKind::Scalar && isInteger(t->scalar)) || t->kind == TypeKind::Idx)
              return Nat::value(b->value->natId());
            fail(n.loc, "'" + n.name + "' is a value of type `" + types::str(t) + "`, not a nat (toNat needs an integer)");
          }
        }
      }
      if (auto it = env_->tunables.find(n.name); it != env_->tunables.end()) {
        usedTunables_.insert(n.name);
        return Nat(it->second);
      }
      if (auto v = cpuTargetNat(n.name, n.loc)) return Nat(*v);
      fail(n.loc, "unknown nat '" + n.name + "'");
    }
    case ast::NatOp::Lookup: {
      const Binding *b = lookup(n.name);
      Nat idx = resolveNat(*n.args[0]);
      if (b && b->kind == Binding::NatsVar) return Nat::lookup(b->nat, idx);
      if (b && b->kind == Binding::Value) {
        TypeP t = resolve(b->value->type);
        if (t->kind == TypeKind::Array) {
          TypeP e = resolve(t->elems[0]);
          if (e->kind == TypeKind::Scalar && isInteger(e->scalar)) return Nat::lookup(b->value->natId(), idx);
        }
        fail(n.loc, "'" + n.name + "' is not an array of integers, so '" + n.name + "@...' is not a nat");
      }
      fail(n.loc, b ? "'" + n.name + "' is not a nats" : "unknown nats '" + n.name + "'");
    }
    case ast::NatOp::ToNat: return exprToNat(*n.expr);
    case ast::NatOp::Call: {
      if ((n.name == "min" || n.name == "max") && n.args.size() == 2) {
        Nat a = resolveNat(*n.args[0]), b = resolveNat(*n.args[1]);
        return n.name == "min" ? Nat::min(a, b) : Nat::max(a, b);
      }
      fail(n.loc, "unknown nat function '" + n.name + "' (nats have min(a, b) and max(a, b))");
    }
    case ast::NatOp::Add: return resolveNat(*n.args[0]) + resolveNat(*n.args[1]);
    case ast::NatOp::Sub: return resolveNat(*n.args[0]) - resolveNat(*n.args[1]);
    case ast::NatOp::Mul: return resolveNat(*n.args[0]) * resolveNat(*n.args[1]);
    case ast::NatOp::Div:
    case ast::NatOp::Mod: {
      Nat a = resolveNat(*n.args[0]);
      Nat c = resolveNat(*n.args[1]);
      auto k = c.asConst();
      if (!k) fail(n.args[1]->loc, "a nat can only be divided by a literal or a tunable, found `" + c.str() + "`");
      if (*k <= 0) fail(n.args[1]->loc, fmt::format("division of a nat by {}", *k));
      return n.op == ast::NatOp::Div ? Nat::div(a, *k) : Nat::mod(a, *k);
    }
    case ast::NatOp::Cond: return Nat::cond(resolveCond(*n.args[0]), resolveNat(*n.args[1]), resolveNat(*n.args[2]));
    case ast::NatOp::Sum: {
      Nat lo = resolveNat(*n.args[0]), hi = resolveNat(*n.args[1]);
      NatVarId i = freshNatVar(n.name);
      push();
      Binding bd;
      bd.kind = Binding::NatVar;
      bd.nat = i;
      bind(n.name, bd);
      Nat body;
      try {
        body = resolveNat(*n.args[2]);
      } catch (...) {
        pop();
        throw;
      }
      pop();
      return Nat::sum(i, lo, hi, body);
    }
    default: fail(n.loc, "a condition is not a nat (use it in `cond ? a : b`)");
  }
}

NatCondP Checker::resolveCond(const ast::NatSyn &n) {
  static const std::map<ast::NatOp, std::string> ops{{ast::NatOp::Eq, "=="}, {ast::NatOp::Ne, "!="},
                                                     {ast::NatOp::Lt, "<"},  {ast::NatOp::Le, "<="},
                                                     {ast::NatOp::Gt, ">"},  {ast::NatOp::Ge, ">="}};
  if (auto it = ops.find(n.op); it != ops.end())
    return NatCond::compare(it->second, resolveNat(*n.args[0]), resolveNat(*n.args[1]));
  if (n.op == ast::NatOp::And) return NatCond::conj(resolveCond(*n.args[0]), resolveCond(*n.args[1]));
  if (n.op == ast::NatOp::Or) return NatCond::disj(resolveCond(*n.args[0]), resolveCond(*n.args[1]));
  if (n.op == ast::NatOp::Not) return NatCond::negate(resolveCond(*n.args[0]));
  fail(n.loc, "expected a condition comparing nats (==, !=, <, <=, >, >=, &&, ||, !)");
}

int64_t Checker::constNat(const ast::Expr &e, const char *what) {
  Nat n = exprToNat(e);
  auto k = n.asConst();
  if (!k) fail(e.loc, std::string(what) + " must be a literal or a tunable, found `" + n.str() + "`");
  return *k;
}

Nat Checker::exprToNatNode(const ast::Expr &e) {
  if (++depth_ > 4000) fail(e.loc, "expression nested too deeply");
  struct Leave {
    int &d;
    ~Leave() { --d; }
  } leave{depth_};
  switch (e.op) {
    case ast::ExprOp::IntLit: return Nat(e.ival);
    case ast::ExprOp::Var: {
      const Binding *b = lookup(e.text);
      if (b) {
        switch (b->kind) {
          case Binding::NatVar: return Nat::var(b->nat);
          case Binding::Tunable: usedTunables_.insert(e.text); return Nat(b->tunable);
          case Binding::Value: {
            TypeP t = resolve(b->value->type);
            if ((t->kind == TypeKind::Scalar && isInteger(t->scalar)) || t->kind == TypeKind::Idx)
              return Nat::value(b->value->natId());
            fail(e.loc, "'" + e.text + "' has type `" + types::str(t) + "`, which is not an integer, so it is not a nat");
          }
          case Binding::NatsVar: fail(e.loc, "'" + e.text + "' is a nats; use an element of it, e.g. " + e.text + "@i");
          case Binding::DataVar: fail(e.loc, "'" + e.text + "' is a data type, not a nat");
        }
      }
      if (auto it = env_->tunables.find(e.text); it != env_->tunables.end()) {
        usedTunables_.insert(e.text);
        return Nat(it->second);
      }
      if (auto v = cpuTargetNat(e.text, e.loc)) return Nat(*v);
      fail(e.loc, "unknown nat '" + e.text + "'");
    }
    case ast::ExprOp::Binary: {
      switch (e.binop) {
        case ast::BinOp::Add: return exprToNat(*e.kids[0]) + exprToNat(*e.kids[1]);
        case ast::BinOp::Sub: return exprToNat(*e.kids[0]) - exprToNat(*e.kids[1]);
        case ast::BinOp::Mul: return exprToNat(*e.kids[0]) * exprToNat(*e.kids[1]);
        case ast::BinOp::Div:
        case ast::BinOp::Mod: {
          Nat a = exprToNat(*e.kids[0]);
          int64_t c = constNat(*e.kids[1], "the divisor of a nat");
          if (c <= 0) fail(e.kids[1]->loc, fmt::format("division of a nat by {}", c));
          return e.binop == ast::BinOp::Div ? Nat::div(a, c) : Nat::mod(a, c);
        }
        default: break;
      }
      fail(e.loc, std::string("operator '") + ast::binOpToken(e.binop) + "' does not give a nat");
    }
    case ast::ExprOp::Index: {
      const ast::Expr &arr = *e.kids[0];
      if (arr.op == ast::ExprOp::Var) {
        const Binding *b = lookup(arr.text);
        if (b && b->kind == Binding::NatsVar) return Nat::lookup(b->nat, exprToNat(*e.kids[1]));
        if (b && b->kind == Binding::Value) {
          TypeP t = resolve(b->value->type);
          if (t->kind == TypeKind::Array) {
            TypeP el = resolve(t->elems[0]);
            if ((el->kind == TypeKind::Scalar && isInteger(el->scalar)) || el->kind == TypeKind::Idx)
              return Nat::lookup(b->value->natId(), exprToNat(*e.kids[1]));
          }
        }
      }
      // Any other integer-valued indexing: check it as a value and read it as a nat.
      tir::ExprP v = check(e, nullptr);
      if (auto n = tirToNat(v)) return *n;
      fail(e.loc, "this element is not a nat (only elements of nats and of integer arrays are)");
    }
    case ast::ExprOp::Annot: return exprToNat(*e.kids[0]);
    case ast::ExprOp::Call: {
      const ast::Expr &head = *e.kids[0];
      if (head.op == ast::ExprOp::Var && !lookup(head.text)) {
        if ((head.text == "min" || head.text == "max") && e.kids.size() == 3) {
          Nat a = exprToNat(*e.kids[1]), b = exprToNat(*e.kids[2]);
          return head.text == "min" ? Nat::min(a, b) : Nat::max(a, b);
        }
        if (head.text == "len" && e.kids.size() == 2) {
          tir::ExprP a = check(*e.kids[1], nullptr);
          TypeP t = expectArray(a->type, e.kids[1]->loc, "len");
          return zonk(t->len);
        }
      }
      break;
    }
    default: break;
  }
  tir::ExprP v = check(e, nullptr);
  if (auto n = tirToNat(v)) return *n;
  fail(e.loc, "this expression cannot be used as a nat (nats are built from nat variables, integer values, "
              "literals, + - *, division by constants, min/max and lookups)");
}

std::optional<Nat> Checker::tirToNat(const tir::ExprP &e) {
  using K = tir::ExprKind;
  switch (e->kind) {
    case K::Lit: {
      TypeP t = resolve(e->type);
      if (t->kind == TypeKind::Scalar && t->scalar == ScalarKind::Bool) return std::nullopt;
      if (t->kind == TypeKind::Scalar && isFloat(t->scalar)) return std::nullopt;
      if (t->kind == TypeKind::Meta && t->numeric == Type::FloatLiteral) return std::nullopt;
      return Nat(e->ival);
    }
    case K::NatValue: return e->nat;
    case K::VarRef: {
      TypeP t = resolve(e->var->type);
      if ((t->kind == TypeKind::Scalar && isInteger(t->scalar)) || t->kind == TypeKind::Idx)
        return Nat::value(e->var->natId());
      return std::nullopt;
    }
    case K::Convert: {
      TypeP t = resolve(e->type);
      if (t->kind == TypeKind::Scalar && isInteger(t->scalar)) return tirToNat(e->args[0]);
      return std::nullopt;
    }
    case K::Binary: {
      auto a = tirToNat(e->args[0]);
      if (!a) return std::nullopt;
      if (e->binop == ast::BinOp::Div || e->binop == ast::BinOp::Mod) {
        auto b = tirToNat(e->args[1]);
        if (!b || !b->asConst() || *b->asConst() <= 0) return std::nullopt;
        return e->binop == ast::BinOp::Div ? Nat::div(*a, *b->asConst()) : Nat::mod(*a, *b->asConst());
      }
      auto b = tirToNat(e->args[1]);
      if (!b) return std::nullopt;
      switch (e->binop) {
        case ast::BinOp::Add: return *a + *b;
        case ast::BinOp::Sub: return *a - *b;
        case ast::BinOp::Mul: return *a * *b;
        default: return std::nullopt;
      }
    }
    case K::MinMax: {
      auto a = tirToNat(e->args[0]), b = tirToNat(e->args[1]);
      if (!a || !b) return std::nullopt;
      return e->isMax ? Nat::max(*a, *b) : Nat::min(*a, *b);
    }
    case K::Index: {
      const tir::ExprP &arr = e->args[0];
      if (arr->kind != K::VarRef) return std::nullopt;
      TypeP t = resolve(e->type);
      if (!((t->kind == TypeKind::Scalar && isInteger(t->scalar)) || t->kind == TypeKind::Idx)) return std::nullopt;
      auto i = tirToNat(e->args[1]);
      if (!i) return std::nullopt;
      return Nat::lookup(arr->var->natId(), *i);
    }
    default: return std::nullopt;
  }
}

// ---- metas and unification ------------------------------------------------------------------------

TypeP Checker::freshMeta(Type::Numeric numeric, const std::string &name) {
  int64_t id = nextMeta_++;
  metaNumeric_[id] = numeric;
  return types::meta(id, numeric, name);
}

Nat Checker::freshNatMeta(const std::string &name) {
  NatVarId v = freshNatVar("?" + name);
  natMetas_.insert(v.id);
  natMetaNames_[v.id] = name;
  return Nat::var(v);
}

TypeP Checker::resolve(const TypeP &t) {
  TypeP cur = t;
  for (int guard = 0; cur->kind == TypeKind::Meta && guard < 10000; ++guard) {
    auto it = typeSolutions_.find(cur->id);
    if (it == typeSolutions_.end()) break;
    cur = it->second;
  }
  if (cur->kind == TypeKind::Meta) {
    auto n = metaNumeric_.find(cur->id);
    if (n != metaNumeric_.end() && n->second != cur->numeric) return types::meta(cur->id, n->second, cur->name);
  }
  return cur;
}

Nat Checker::zonk(const Nat &n) {
  if (natSolutions_.empty()) return n;
  Nat cur = n;
  for (int i = 0; i < 32; ++i) {
    Nat next = substitute(cur, natSolutions_);
    if (next.identical(cur) || next == cur) return next;
    cur = next;
  }
  return cur;
}

TypeP Checker::zonk(const TypeP &t0) {
  // A node is rebuilt only when something below it changed (the TIR of a def shares the types
  // of its parameters and of every expression whose type had no meta left).
  TypeP t = resolve(t0);
  switch (t->kind) {
    case TypeKind::Scalar:
    case TypeKind::Var:
    case TypeKind::Meta: return t;
    case TypeKind::Idx: {
      Nat len = zonk(t->len);
      return len.identical(t->len) ? t : types::idx(len);
    }
    case TypeKind::Array: {
      Nat len = zonk(t->len);
      TypeP elem = zonk(t->elems[0]);
      if (len.identical(t->len) && elem == t->elems[0]) return t;
      return types::array(len, t->binder, std::move(elem), t->packed);
    }
    case TypeKind::Tuple: {
      std::vector<TypeP> es;
      bool same = true;
      for (const TypeP &e : t->elems) {
        es.push_back(zonk(e));
        same = same && es.back() == e;
      }
      return same ? t : types::tuple(std::move(es));
    }
    case TypeKind::DepPair: {
      TypeP body = zonk(t->elems[0]);
      return body == t->elems[0] ? t : types::depPair(t->binder, t->pairOverNats, std::move(body));
    }
    case TypeKind::Fun: {
      std::vector<FunParam> ps = t->params;
      TypeP result = zonk(t->elems[0]);
      bool same = result == t->elems[0];
      for (FunParam &p : ps)
        if (!p.isNat) {
          TypeP before = p.type;
          p.type = zonk(p.type);
          same = same && p.type == before;
        }
      return same ? t : types::fun(std::move(ps), std::move(result));
    }
  }
  return t;
}

namespace {

bool occurs(Checker &c, int64_t meta, const TypeP &t0) {
  TypeP t = c.resolve(t0);
  if (t->kind == TypeKind::Meta) return t->id == meta;
  for (const TypeP &e : t->elems)
    if (occurs(c, meta, e)) return true;
  for (const FunParam &p : t->params)
    if (!p.isNat && occurs(c, meta, p.type)) return true;
  return false;
}

bool numericCompatible(Type::Numeric need, const TypeP &t) {
  switch (need) {
    case Type::NotNumeric: return true;
    case Type::AnyNumeric:
    case Type::IntLiteral:
      if (t->kind == TypeKind::Scalar) return t->scalar != ScalarKind::Bool;
      return t->kind == TypeKind::Idx || t->kind == TypeKind::Var;
    case Type::FloatLiteral:
      if (t->kind == TypeKind::Scalar) return isFloat(t->scalar);
      return t->kind == TypeKind::Var;
  }
  return false;
}

/// The stronger of two numeric constraints on metas being merged.
Type::Numeric mergeNumeric(Type::Numeric a, Type::Numeric b) {
  if (a == Type::FloatLiteral || b == Type::FloatLiteral) return Type::FloatLiteral;
  if (a == Type::IntLiteral || b == Type::IntLiteral) return Type::IntLiteral;
  if (a == Type::AnyNumeric || b == Type::AnyNumeric) return Type::AnyNumeric;
  return Type::NotNumeric;
}

}  // namespace

bool Checker::unify(const TypeP &a0, const TypeP &b0) {
  TypeP a = resolve(a0), b = resolve(b0);
  if (a->kind == TypeKind::Meta && b->kind == TypeKind::Meta) {
    if (a->id == b->id) return true;
    Type::Numeric merged = mergeNumeric(metaNumeric_[a->id], metaNumeric_[b->id]);
    metaNumeric_[b->id] = merged;
    typeSolutions_[a->id] = b;
    return true;
  }
  if (b->kind == TypeKind::Meta) std::swap(a, b);
  if (a->kind == TypeKind::Meta) {
    if (!numericCompatible(metaNumeric_[a->id], b)) return false;
    if (occurs(*this, a->id, b)) return false;
    typeSolutions_[a->id] = b;
    return true;
  }
  if (a->kind != b->kind) return false;
  switch (a->kind) {
    case TypeKind::Meta: return false;  // handled above
    case TypeKind::Scalar: return a->scalar == b->scalar;
    case TypeKind::Var: return a->id == b->id;
    case TypeKind::Idx: return unifyNat(a->len, b->len);
    case TypeKind::Array: {
      if (!unifyNat(a->len, b->len)) return false;
      NatSubst s;
      s.vars.emplace(b->binder.id, Nat::var(a->binder));
      return unify(a->elems[0], types::substitute(b->elems[0], s));
    }
    case TypeKind::Tuple:
      if (a->elems.size() != b->elems.size()) return false;
      for (size_t i = 0; i < a->elems.size(); ++i)
        if (!unify(a->elems[i], b->elems[i])) return false;
      return true;
    case TypeKind::DepPair: {
      if (a->pairOverNats != b->pairOverNats) return false;
      NatSubst s;
      s.vars.emplace(b->binder.id, Nat::var(a->binder));
      s.arrays.emplace(b->binder.id, a->binder);
      return unify(a->elems[0], types::substitute(b->elems[0], s));
    }
    case TypeKind::Fun: {
      if (a->params.size() != b->params.size()) return false;
      NatSubst s;
      for (size_t i = 0; i < a->params.size(); ++i) {
        const FunParam &p = a->params[i], &q = b->params[i];
        if (p.isNat != q.isNat) return false;
        if (p.isNat) s.vars.emplace(q.natVar.id, Nat::var(p.natVar));
        else if (!unify(p.type, types::substitute(q.type, s))) return false;
      }
      return unify(a->elems[0], types::substitute(b->elems[0], s));
    }
  }
  return false;
}

bool Checker::unifyNat(const Nat &a0, const Nat &b0) {
  Nat a = zonk(a0), b = zonk(b0);
  if (a == b) return true;
  Nat d = a - b;
  std::vector<int64_t> ids;
  d.collectIds(ids);
  std::set<int64_t> metas;
  for (int64_t id : ids)
    if (natMetas_.count(id) && !natSolutions_.vars.count(id)) metas.insert(id);
  if (metas.empty()) return false;
  if (metas.size() == 1) {
    int64_t m = *metas.begin();
    // Solvable when m occurs only as the plain monomial `c*m`.
    Rat c(0);
    bool linear = true;
    std::vector<Nat::Term> rest;
    for (const Nat::Term &t : d.terms()) {
      bool hasM = false;
      for (const auto &f : t.mono.factors)
        if (f.first->kind == NatAtomKind::Var && f.first->var.id == m) hasM = true;
      bool plain = t.mono.factors.size() == 1 && t.mono.factors[0].second == 1 &&
                   t.mono.factors[0].first->kind == NatAtomKind::Var && t.mono.factors[0].first->var.id == m;
      if (plain) c = c + t.coeff;
      else if (hasM) linear = false;
      else rest.push_back(t);
    }
    Nat restNat = Nat::fromTerms(rest);
    if (linear && !c.isZero() && !restNat.mentions(m)) {
      Nat sol = restNat.scale(-(Rat(1) / c));
      if (sol.hasIntCoeffs() || c == Rat(1) || c == Rat(-1)) {
        natSolutions_.vars[m] = sol;
        return true;
      }
    }
  }
  postponed_.push_back(Postponed{a, b, SourceLoc{}, "", nullptr, nullptr});
  return true;
}

namespace {

/// Finds the first pair of nats that differ between two types of the same shape.
bool firstNatDifference(Checker &c, const TypeP &a0, const TypeP &b0, Nat &x, Nat &y) {
  TypeP a = c.zonk(a0), b = c.zonk(b0);
  if (a->kind != b->kind) return false;
  if (a->kind == TypeKind::Idx || a->kind == TypeKind::Array) {
    if (a->len != b->len) {
      x = a->len;
      y = b->len;
      return true;
    }
  }
  if (a->kind == TypeKind::Array) {
    NatSubst s;
    s.vars.emplace(b->binder.id, Nat::var(a->binder));
    return firstNatDifference(c, a->elems[0], types::substitute(b->elems[0], s), x, y);
  }
  if (a->elems.size() != b->elems.size()) return false;
  for (size_t i = 0; i < a->elems.size(); ++i)
    if (firstNatDifference(c, a->elems[i], b->elems[i], x, y)) return true;
  return false;
}

}  // namespace

void Checker::expect(const TypeP &expected, const TypeP &found, SourceLoc loc, const std::string &what) {
  size_t before = postponed_.size();
  if (unify(expected, found)) {
    for (size_t i = before; i < postponed_.size(); ++i) {
      postponed_[i].loc = loc;
      postponed_[i].what = what;
      postponed_[i].expected = expected;
      postponed_[i].found = found;
    }
    return;
  }
  TypeP e = zonk(expected), f = zonk(found);
  std::string msg = "type mismatch in " + what + ": expected `" + types::str(e) + "`, found `" + types::str(f) + "`";
  diags_.error(loc, msg);
  Nat x, y;
  if (firstNatDifference(*this, e, f, x, y))
    diags_.note(loc, "the lengths differ: `" + x.str() + "` is not `" + y.str() + "`");
  throw DefFailed{};
}

void Checker::expectNat(const Nat &expected, const Nat &found, SourceLoc loc, const std::string &what) {
  size_t before = postponed_.size();
  if (unifyNat(expected, found)) {
    for (size_t i = before; i < postponed_.size(); ++i) {
      postponed_[i].loc = loc;
      postponed_[i].what = what;
    }
    return;
  }
  fail(loc, what + ": `" + zonk(expected).str() + "` is not equal to `" + zonk(found).str() + "`");
}

TypeP Checker::expectArray(const TypeP &t0, SourceLoc loc, const std::string &what) {
  TypeP t = resolve(t0);
  if (t->kind == TypeKind::Array) return t;
  if (t->kind == TypeKind::Meta && metaNumeric_[t->id] == Type::NotNumeric) {
    TypeP arr = types::array(freshNatMeta("n"), freshMeta());
    unify(t, arr);
    return resolve(arr);
  }
  fail(loc, what + " expects an array, found " + describe(t) + " (`" + types::str(zonk(t)) + "`)");
}

bool Checker::isNumeric(const TypeP &t0) {
  TypeP t = resolve(t0);
  if (t->kind == TypeKind::Scalar) return t->scalar != ScalarKind::Bool;
  if (t->kind == TypeKind::Var) return true;
  if (t->kind == TypeKind::Meta) return metaNumeric_[t->id] != Type::NotNumeric;
  return false;
}

void Checker::solvePostponed(bool final) {
  for (int round = 0; round < 8; ++round) {
    std::vector<Postponed> pending;
    pending.swap(postponed_);
    bool progress = false;
    for (Postponed &p : pending) {
      Nat a = zonk(p.a), b = zonk(p.b);
      if (a == b) {
        progress = true;
        continue;
      }
      size_t before = postponed_.size();
      bool ok = unifyNat(a, b);
      bool postponedAgain = postponed_.size() > before;
      if (postponedAgain) {
        postponed_.pop_back();
        Postponed again = p;
        again.a = a;
        again.b = b;
        postponed_.push_back(again);
        continue;
      }
      progress = true;
      if (!ok) failPostponed(p, a, b);
    }
    if (!progress) break;
  }
  if (!final) return;
  for (Postponed &p : postponed_) {
    Nat a = zonk(p.a), b = zonk(p.b);
    std::vector<int64_t> ids;
    (a - b).collectIds(ids);
    std::string metaName;
    for (int64_t id : ids)
      if (natMetas_.count(id) && !natSolutions_.vars.count(id)) metaName = natMetaNames_[id];
    if (!metaName.empty())
      diags_.error(p.loc, "cannot infer the implicit parameter '" + metaName + "' from the equation `" + a.str() +
                              "` = `" + b.str() + "`" + (p.what.empty() ? "" : " (in " + p.what + ")"));
    else
      failPostponed(p, a, b);
    throw DefFailed{};
  }
}

void Checker::failPostponed(const Postponed &p, const Nat &a, const Nat &b) {
  if (p.expected && p.found) {
    diags_.error(p.loc, "type mismatch in " + p.what + ": expected `" + types::str(zonk(p.expected)) + "`, found `" +
                            types::str(zonk(p.found)) + "`");
    diags_.note(p.loc, "`" + a.str() + "` is not equal to `" + b.str() + "`");
  } else {
    diags_.error(p.loc, (p.what.empty() ? std::string("nat equation") : p.what) + ": `" + a.str() +
                            "` is not equal to `" + b.str() + "`");
  }
  throw DefFailed{};
}

// ---- definitions ----------------------------------------------------------------------------------

namespace {

/// Walks array lengths of a type and lists those with a subtraction not proved non-negative.
void collectUnproven(Checker &c, const TypeP &t, NatFacts facts, SourceLoc loc) {
  switch (t->kind) {
    case TypeKind::Array: {
      bool hasMinus = false;
      for (const Nat::Term &term : t->len.terms())
        if (term.coeff < Rat(0)) hasMinus = true;
      if (hasMinus && !proveNonNegative(t->len, facts)) c.recordUnproven(loc, t->len.str());
      facts.ranges.push_back({t->binder.id, Nat(0), t->len});
      collectUnproven(c, t->elems[0], facts, loc);
      break;
    }
    case TypeKind::Tuple:
    case TypeKind::DepPair:
      for (const TypeP &e : t->elems) collectUnproven(c, e, facts, loc);
      break;
    default: break;
  }
}

}  // namespace

tir::DefP Checker::checkDef(ModuleEnv &env, const ast::DefDecl &d) {
  if (auto it = env.checked.find(d.name); it != env.checked.end()) {
    if (!it->second) throw DefFailed{};  // failed before: its error is already reported
    return it->second;
  }
  if (env.inProgress.count(d.name)) fail(d.loc, "'" + d.name + "' is recursive; recursive definitions are not supported");
  env.inProgress.insert(d.name);

  // Save the caller's per-def state: defs are checked on demand, from inside other defs.
  auto savedScopes = std::move(scopes_);
  auto savedTypeSol = std::move(typeSolutions_);
  auto savedNumeric = std::move(metaNumeric_);
  auto savedNatSol = std::move(natSolutions_);
  auto savedNatMetas = std::move(natMetas_);
  auto savedNames = std::move(natMetaNames_);
  auto savedPostponed = std::move(postponed_);
  auto savedFacts = std::move(facts_);
  auto savedCalls = std::move(calls_);
  auto savedTunables = std::move(usedTunables_);
  auto savedUnproven = std::move(unproven_);
  int savedPositions = positions_;
  positions_ = 0;
  ModuleEnv *savedEnv = env_;
  scopes_.clear();
  typeSolutions_.clear();
  metaNumeric_.clear();
  natSolutions_ = NatSubst{};
  natMetas_.clear();
  natMetaNames_.clear();
  postponed_.clear();
  facts_ = NatFacts{};
  calls_.clear();
  usedTunables_.clear();
  unproven_.clear();
  env_ = &env;
  auto restore = [&]() {
    scopes_ = std::move(savedScopes);
    typeSolutions_ = std::move(savedTypeSol);
    metaNumeric_ = std::move(savedNumeric);
    natSolutions_ = std::move(savedNatSol);
    natMetas_ = std::move(savedNatMetas);
    natMetaNames_ = std::move(savedNames);
    postponed_ = std::move(savedPostponed);
    facts_ = std::move(savedFacts);
    calls_ = std::move(savedCalls);
    usedTunables_ = std::move(savedTunables);
    unproven_ = std::move(savedUnproven);
    positions_ = savedPositions;
    env_ = savedEnv;
    env.inProgress.erase(d.name);
  };

  auto def = std::make_shared<tir::Def>();
  def->name = d.name;
  def->loc = d.loc;
  try {
    push();
    for (const auto &[name, value] : env.tunables) {
      Binding b;
      b.kind = Binding::Tunable;
      b.tunable = value;
      bind(name, b);
    }
    push();
    std::set<std::string> seen;
    for (const ast::Param &p : d.params) {
      if (!seen.insert(p.name).second) fail(p.loc, "parameter '" + p.name + "' is declared twice");
      tir::DefParam dp;
      dp.implicit = p.implicit;
      dp.name = p.name;
      dp.loc = p.loc;
      Binding b;
      if (p.isKind) {
        if (p.kind == ast::Kind::Data) {
          dp.sort = tir::DefParam::Data;
          dp.typeVar = types::var(p.name, freshNatVar(p.name).id, Type::AnyNumeric);
          b.kind = Binding::DataVar;
          b.dataVar = dp.typeVar;
          if (!p.implicit) fail(p.loc, "a data parameter must be implicit: write {" + p.name + ": data}");
        } else {
          dp.sort = p.kind == ast::Kind::Nat ? tir::DefParam::Nat : tir::DefParam::Nats;
          dp.natVar = freshNatVar(p.name);
          b.kind = p.kind == ast::Kind::Nat ? Binding::NatVar : Binding::NatsVar;
          b.nat = dp.natVar;
        }
      } else {
        if (p.implicit) fail(p.loc, "a value parameter cannot be implicit: write (" + p.name + ": ...)");
        dp.sort = tir::DefParam::Value;
        dp.value = tir::makeVar(p.name, resolveType(*p.type));
        b.kind = Binding::Value;
        b.value = dp.value;
      }
      bind(p.name, b);
      def->params.push_back(dp);
    }
    TypeP ret = d.ret ? resolveType(*d.ret) : nullptr;
    tir::ExprP body = check(*d.body, ret);
    solvePostponed(false);
    // Literal metas default now (over the whole def, the result type included).
    for (auto &[id, num] : metaNumeric_) {
      if (typeSolutions_.count(id)) continue;
      TypeP m = resolve(types::meta(id, num));
      if (m->kind != TypeKind::Meta) continue;
      if (num == Type::IntLiteral) unify(m, types::scalar(ScalarKind::I32));
      else if (num == Type::FloatLiteral) unify(m, types::scalar(ScalarKind::F32));
    }
    solvePostponed(true);
    def->body = zonkExpr(body);
    def->result = zonk(ret ? ret : body->type);
    for (tir::DefParam &p : def->params)
      if (p.sort == tir::DefParam::Value) {
        auto v = std::make_shared<tir::Var>(*p.value);
        v->type = zonk(p.value->type);
        p.value = v;
      }
    for (tir::CallRecord &c : calls_) {
      c.result = zonk(c.result);
      for (auto &imp : c.implicits) {
        if (imp.isType) imp.type = zonk(imp.type);
        else imp.nat = zonk(imp.nat);
      }
    }
    def->calls = calls_;
    def->tunables = usedTunables_;
    for (const tir::DefParam &p : def->params)
      if (p.sort == tir::DefParam::Value) collectUnproven(*this, p.value->type, NatFacts{}, p.loc);
    collectUnproven(*this, def->result, NatFacts{}, d.loc);
    def->unproven = unproven_;
  } catch (const DefFailed &) {
    env.checked[d.name] = nullptr;
    restore();
    throw;
  } catch (const CompileError &e) {
    diags_.error(e.loc.valid() ? e.loc : d.loc, e.what());
    env.checked[d.name] = nullptr;
    restore();
    throw DefFailed{};
  }
  restore();
  env.checked[d.name] = def;
  return def;
}

std::optional<int64_t> Checker::cpuTargetNat(const std::string &name, SourceLoc loc) {
  int64_t value = name == "cpu_vector_registers" ? opts_.cpuVectorRegisters
                  : name == "cpu_vector_bits"    ? opts_.cpuVectorBits
                                                 : -1;
  if (value < 0) return std::nullopt;
  // A type or a kernel that depended on the CPU would give a C program a different ABI on
  // another machine; a tunable's value only picks among choices the file lists.
  if (!inTunableDecl_)
    fail(loc, "'" + name +
                  "' is the CPU target's: only a tunable's value can read it, e.g. tunable ROWS: nat = cpu_vector_registers >= 32 ? 8 : 4;");
  if (value == 0) fail(loc, "'" + name + "': this compilation does not know its CPU target's vectors");
  return value;
}

void Checker::evaluateTunables(ModuleEnv &env) {
  ModuleEnv *savedEnv = env_;
  env_ = &env;
  struct InDecl {
    bool &flag;
    bool saved;
    explicit InDecl(bool &f) : flag(f), saved(f) { flag = true; }
    ~InDecl() { flag = saved; }
  } inDecl(inTunableDecl_);
  std::set<std::string> declared;
  for (const ast::TunableDecl &t : env.module->tunables) {
    if (declared.count(t.name)) {
      diags_.error(t.loc, "tunable '" + t.name + "' is declared twice");
      continue;
    }
    declared.insert(t.name);
    try {
      push();
      tir::Tunable tu;
      tu.name = t.name;
      auto value = resolveNat(*t.init).asConst();
      if (!value) fail(t.init->loc, "the value of a tunable must be a constant");
      tu.value = *value;
      for (const auto &c : t.choices) {
        auto v = resolveNat(*c).asConst();
        if (!v) fail(c->loc, "the values of a tunable must be constants");
        tu.choices.push_back(*v);
      }
      std::optional<std::pair<int64_t, int64_t>> range;
      if (t.lo) {
        auto lo = resolveNat(*t.lo).asConst(), hi = resolveNat(*t.hi).asConst();
        if (!lo || !hi) fail(t.lo->loc, "the range of a tunable must be constant");
        range = std::make_pair(*lo, *hi);
        for (int64_t v = *lo; v <= *hi && tu.choices.size() < 4096; ++v) tu.choices.push_back(v);
      }
      pop();
      for (const auto &[name, v] : opts_.defines)
        if (name == t.name) tu.value = v;
      // An interval is checked as an interval: its enumeration in tu.choices stops at 4096 values.
      if (range && (tu.value < range->first || tu.value > range->second)) {
        diags_.error(t.loc, fmt::format("tunable '{}' = {} is not in its range {} .. {}", t.name, tu.value, range->first,
                                        range->second));
      } else if (!range && !tu.choices.empty() &&
                 std::find(tu.choices.begin(), tu.choices.end(), tu.value) == tu.choices.end()) {
        std::vector<int64_t> shown(tu.choices.begin(), tu.choices.begin() + std::min<size_t>(tu.choices.size(), 16));
        diags_.error(t.loc,
                     fmt::format("tunable '{}' = {} is not one of its values [{}]", t.name, tu.value, fmt::join(shown, ", ")));
      }
      env.tunables[t.name] = tu.value;
      env.tunableList.push_back(tu);
    } catch (const DefFailed &) {
      scopes_.clear();
    }
  }
  env_ = savedEnv;
}

// ---- the program ------------------------------------------------------------------------------------

std::optional<tir::Program> Checker::run(const ast::Module &main) {
  unsigned errorsBefore = diags_.numErrors();
  mainEnv_ = loadModule(main, dirOf(main.path));
  env_ = mainEnv_;
  tir::Program prog;

  // Tunables, with -D overrides: each module's own (an imported module's were evaluated as it
  // was loaded); -D sets a tunable of that name in any of them.
  evaluateTunables(*mainEnv_);
  prog.tunables = mainEnv_->tunableList;
  for (const auto &[name, v] : opts_.defines) {
    bool declared = false;
    for (const auto &env : envs_)
      for (const ast::TunableDecl &t : env->module->tunables)
        if (t.name == name) declared = true;
    if (!declared) diags_.error(SourceLoc{}, fmt::format("-D {}={}: there is no tunable named '{}'", name, v, name));
  }

  for (const auto &d : main.defs) {
    try {
      prog.defs.push_back(checkDef(*mainEnv_, *d));
    } catch (const DefFailed &) {
    }
  }

  std::set<std::string> cnames;
  for (const ast::ExportDecl &e : main.exports) {
    try {
      tir::Export ex;
      ex.cname = e.cname;
      ex.loc = e.loc;
      if (!cnames.insert(e.cname).second) fail(e.cnameLoc, "two exports are named '" + e.cname + "'");
      if (e.cname.rfind("spl_error", 0) == 0 || e.cname.rfind("spl_rt_", 0) == 0)
        fail(e.cnameLoc, "the name '" + e.cname + "' is reserved for the runtime library");
      if (std::optional<std::string> why = types::whyNotCName(e.cname))
        fail(e.cnameLoc, "cannot export as '" + e.cname + "': " + *why);
      env_ = mainEnv_;
      tir::DefP def;
      if (!hasDef(e.def)) fail(e.loc, "cannot export '" + e.def + "': no definition has that name");
      def = lookupDef(e.def, e.loc);
      ex.def = def;
      for (const ast::ExportTarget &t : e.targets) {
        if (t.name == "cpu") ex.cpu = true;
        else if (t.name == "cuda") ex.cuda = true;
        else fail(t.loc, "unknown target '" + t.name + "' (the targets are cpu and cuda)");
      }
      if (e.targets.empty()) ex.cpu = true;
      std::set<std::string> given;
      for (const ast::ExportArg &a : e.args) {
        const tir::DefParam *param = nullptr;
        for (const tir::DefParam &p : def->params)
          if (p.name == a.name) param = &p;
        if (!param) fail(a.loc, "'" + e.def + "' has no parameter named '" + a.name + "'");
        if (!given.insert(a.name).second) fail(a.loc, "the export fixes '" + a.name + "' twice");
        if (param->sort == tir::DefParam::Nat) {
          // A nat parameter fixed to a constant: a natural literal or an expression of literals
          // and tunables. A name alone parses as a type: a tunable's is read as a nat.
          ast::NatSynP nat = a.value.nat;
          auto isTunable = [&](const std::string &name) {
            return std::any_of(mainEnv_->tunableList.begin(), mainEnv_->tunableList.end(),
                               [&](const tir::Tunable &t) { return t.name == name; });
          };
          if (!nat && a.value.type && a.value.type->op == ast::TypeOp::Named && a.value.type->args.empty() &&
              isTunable(a.value.type->name)) {
            auto named = std::make_shared<ast::NatSyn>();
            named->op = ast::NatOp::Var;
            named->loc = a.value.type->loc;
            named->name = a.value.type->name;
            nat = named;
          }
          if (!nat) fail(a.loc, "'" + a.name + "' is a nat parameter: fix it to a natural number, e.g. " + a.name + " = 4");
          push();
          Nat v = resolveNat(*nat);
          pop();
          std::optional<int64_t> c = v.asConst();
          if (!c || *c < 0) fail(a.loc, "'" + a.name + "' must be fixed to a constant natural number, found `" + v.str() + "`");
          ex.natArgs[param->natVar.id] = *c;
          continue;
        }
        if (param->sort != tir::DefParam::Data)
          fail(a.loc, "only data and nat parameters can be fixed by an export; '" + a.name + "' is a " +
                          (param->sort == tir::DefParam::Value ? "value" : "nats") + " parameter");
        if (!a.value.type) fail(a.loc, "'" + a.name + "' must be given a scalar type (f32, f64, i32 or i64)");
        push();
        TypeP t = resolveType(*a.value.type);
        pop();
        if (t->kind != TypeKind::Scalar || t->scalar == ScalarKind::Bool)
          fail(a.loc, "'" + a.name + "' must be f32, f64, i32 or i64, found `" + types::str(t) + "`");
        ex.typeArgs[param->typeVar->id] = t;
      }
      for (const tir::DefParam &p : def->params)
        if (p.sort == tir::DefParam::Data && !given.count(p.name))
          fail(e.loc, "the export of '" + e.def + "' must fix its data parameter '" + p.name + "', e.g. export " +
                          e.def + "(" + p.name + " = f32) as " + e.cname);
      checkExportStorage(e, *def, ex);
      prog.exports.push_back(std::move(ex));
    } catch (const DefFailed &) {
    } catch (const CompileError &err) {
      diags_.error(err.loc.valid() ? err.loc : e.loc, err.what());
    }
  }

  // The header lists the tunables an export depends on from an imported module too (a C program
  // sizes SELL-C-sigma operands by them); a main-file tunable of the same name comes first.
  for (const tir::Export &ex : prog.exports)
    for (const std::string &name : ex.def->tunables) {
      bool listed = std::any_of(prog.tunables.begin(), prog.tunables.end(), [&](const tir::Tunable &t) { return t.name == name; });
      for (const auto &env : envs_)
        for (const tir::Tunable &t : env->tunableList)
          if (!listed && t.name == name) {
            prog.tunables.push_back(t);
            listed = true;
          }
    }

  std::map<std::pair<std::string, std::string>, SourceLoc> scheduleSeen;  // (name, target) -> first block
  for (const ast::ScheduleDecl &s : main.schedules)
    for (const ast::ScheduleDecl::Name &name : s.names) {
      // `schedule a, b for T`: the block for each name.
      auto [first, inserted] = scheduleSeen.emplace(std::make_pair(name.text, s.target), name.loc);
      if (!inserted) {
        // Two blocks would apply in turn, the second to loops the first renamed: one block is clearer.
        diags_.error(name.loc, fmt::format("a second schedule for '{}' for {} (the first is at line {}); put its commands in one block",
                                           name.text, s.target, first->second.line));
        continue;
      }
      bool found = false;
      for (const tir::Export &e : prog.exports)
        if (e.cname == name.text || e.def->name == name.text) found = true;
      if (!found) {
        bool defined = std::any_of(main.defs.begin(), main.defs.end(),
                                   [&](const std::shared_ptr<ast::DefDecl> &d) { return d->name == name.text; });
        // A block applies to an export's kernel; a definition that exports only call is inlined
        // into theirs, where its loops are the callers' to schedule.
        diags_.error(name.loc, defined ? "schedule for '" + name.text +
                                             "': no export names this definition; schedule the exported definitions "
                                             "that call it (their kernels hold its loops)"
                                       : "schedule for '" + name.text + "': no export or definition has that name");
        continue;
      }
      if (s.target != "cpu" && s.target != "cuda") {
        diags_.error(s.targetLoc, "unknown target '" + s.target + "' (the targets are cpu and cuda)");
        break;
      }
      prog.schedules.push_back(tir::Schedule{name.text, s.target, name.loc, tir::typedCommands(s.cmds, mainEnv_->tunables),
                                                tir::typedScript(s.cmds, mainEnv_->tunables)});
    }

  if (diags_.numErrors() > errorsBefore) return std::nullopt;
  return prog;
}

}  // namespace check

std::optional<tir::Program> checkProgram(const ast::Module &main, SourceManager &sm, Diagnostics &diags,
                                         const CheckOptions &opts) {
  check::Checker c(sm, diags, opts);
  return c.run(main);
}

}  // namespace spl
