/// \file Nat.cpp: the nat normaliser (polynomials over atoms) and Sigma closed forms.
#include "types/Nat.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <numeric>
#include <set>

#include "support/Error.h"
#include "support/Format.h"

namespace spl {

// ---- Rat ----------------------------------------------------------------------------------------

namespace {

[[noreturn]] void overflow() { throw CompileError(SourceLoc{}, "nat arithmetic overflows 64 bits"); }

int64_t narrow(__int128 v) {
  if (v > INT64_MAX || v < INT64_MIN) overflow();
  return static_cast<int64_t>(v);
}

__int128 gcd128(__int128 a, __int128 b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b != 0) {
    __int128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

Rat makeRat(__int128 n, __int128 d) {
  if (d == 0) throw CompileError(SourceLoc{}, "division by zero in a nat expression");
  if (d < 0) {
    n = -n;
    d = -d;
  }
  __int128 g = gcd128(n, d);
  if (g > 1) {
    n /= g;
    d /= g;
  }
  return Rat::reduced(narrow(n), narrow(d));
}

}  // namespace

Rat::Rat(int64_t n, int64_t d) : num_(n), den_(d) {
  if (d == 0) throw CompileError(SourceLoc{}, "division by zero in a nat expression");
  if (d != 1) {
    Rat r = makeRat(n, d);
    num_ = r.num_;
    den_ = r.den_;
  }
}

Rat Rat::operator+(const Rat &o) const {
  if (den_ == 1 && o.den_ == 1) return Rat(narrow(__int128(num_) + o.num_));
  return makeRat(__int128(num_) * o.den_ + __int128(o.num_) * den_, __int128(den_) * o.den_);
}
Rat Rat::operator-(const Rat &o) const { return *this + (-o); }
Rat Rat::operator*(const Rat &o) const {
  if (den_ == 1 && o.den_ == 1) return Rat(narrow(__int128(num_) * o.num_));
  return makeRat(__int128(num_) * o.num_, __int128(den_) * o.den_);
}
Rat Rat::operator/(const Rat &o) const { return makeRat(__int128(num_) * o.den_, __int128(den_) * o.num_); }
Rat Rat::operator-() const {
  if (num_ == INT64_MIN) overflow();
  Rat r;
  r.num_ = -num_;
  r.den_ = den_;
  return r;
}
bool Rat::operator<(const Rat &o) const { return __int128(num_) * o.den_ < __int128(o.num_) * den_; }
std::string Rat::str() const {
  return den_ == 1 ? std::to_string(num_) : std::to_string(num_) + "/" + std::to_string(den_);
}

// ---- variables ----------------------------------------------------------------------------------

NatVarId freshNatVar(const std::string &name) {
  static std::atomic<int64_t> next{1};
  return NatVarId{next++, name};
}

// ---- representation -------------------------------------------------------------------------------

struct Nat::Rep {
  std::vector<Term> terms;  // sorted by mono.key, no zero coefficients
  std::string key;
};

struct NatImpl {
  static Nat make(std::vector<Nat::Term> terms);
  static Nat atom(NatAtomP a);
  static NatAtomP mkAtom(NatAtom a);
  static std::string monoKey(const std::vector<std::pair<NatAtomP, int>> &f);
  static Nat::Monomial mulMono(const Nat::Monomial &a, const Nat::Monomial &b);
  static bool mentionsAtom(const NatAtom &a, int64_t id);
  static bool integerValued(const Nat &n);
  static size_t numTerms(const Nat &n) { return n.terms().size(); }
  static Nat faulhaber(int p, const Nat &x);
  static Nat sumClosed(const NatVarId &i, const Nat &lo, const Nat &hi, const Nat &body);
};

std::string NatImpl::monoKey(const std::vector<std::pair<NatAtomP, int>> &f) {
  std::string k;
  for (const auto &[a, p] : f) {
    if (!k.empty()) k += '*';
    k += a->key;
    if (p != 1) k += "^" + std::to_string(p);
  }
  return k;
}

Nat NatImpl::make(std::vector<Nat::Term> terms) {
  std::map<std::string, Nat::Term> merged;
  for (Nat::Term &t : terms) {
    if (t.coeff.isZero()) continue;
    auto it = merged.find(t.mono.key);
    if (it == merged.end()) {
      merged.emplace(t.mono.key, std::move(t));
    } else {
      it->second.coeff = it->second.coeff + t.coeff;
    }
  }
  auto rep = std::make_shared<Nat::Rep>();
  for (auto &[k, t] : merged) {
    if (t.coeff.isZero()) continue;
    rep->key += t.coeff.str() + "*" + k + ";";
    rep->terms.push_back(std::move(t));
  }
  return Nat(std::shared_ptr<const Nat::Rep>(rep));
}

Nat NatImpl::atom(NatAtomP a) {
  Nat::Monomial m;
  m.factors.emplace_back(a, 1);
  m.key = monoKey(m.factors);
  return make({Nat::Term{m, Rat(1)}});
}

NatAtomP NatImpl::mkAtom(NatAtom a) { return std::make_shared<const NatAtom>(std::move(a)); }

Nat::Monomial NatImpl::mulMono(const Nat::Monomial &a, const Nat::Monomial &b) {
  std::map<std::string, std::pair<NatAtomP, int>> f;
  for (const auto &x : a.factors) f[x.first->key] = x;
  for (const auto &x : b.factors) {
    auto it = f.find(x.first->key);
    if (it == f.end()) f[x.first->key] = x;
    else it->second.second += x.second;
  }
  Nat::Monomial m;
  for (auto &[k, v] : f) m.factors.push_back(v);
  m.key = monoKey(m.factors);
  return m;
}

// ---- Nat basics ---------------------------------------------------------------------------------

namespace {
/// Small constants are made once and shared: every Type holds a Nat (a length or a bound) and
/// most hold 0 or a literal, so making each anew cost an allocation, a map and a key per node.
constexpr int64_t kSharedConstantMin = -16, kSharedConstantMax = 256;
}  // namespace

Nat::Nat(int64_t v) {
  if (v < kSharedConstantMin || v > kSharedConstantMax) {
    rep_ = NatImpl::make({Term{Monomial{}, Rat(v)}}).rep_;
    return;
  }
  static const std::vector<std::shared_ptr<const Rep>> shared = [] {
    std::vector<std::shared_ptr<const Rep>> reps;
    for (int64_t c = kSharedConstantMin; c <= kSharedConstantMax; ++c)
      reps.push_back(NatImpl::make({Term{Monomial{}, Rat(c)}}).rep_);
    return reps;
  }();
  rep_ = shared[static_cast<size_t>(v - kSharedConstantMin)];
}

Nat Nat::fromTerms(std::vector<Term> terms) { return NatImpl::make(std::move(terms)); }

Nat Nat::fromAtom(const NatAtomP &a) { return NatImpl::atom(a); }

std::optional<Nat> Nat::divideExact(const Nat &n, const Nat &k) {
  if (auto c = k.asConst()) {
    if (*c <= 0) return std::nullopt;
    Nat q = Nat::div(n, *c);
    if (q * Nat(*c) == n) return q;
    return std::nullopt;
  }
  if (k.terms().size() != 1) return std::nullopt;
  const Term &kt = k.terms()[0];
  Nat q(0);
  for (const Term &t : n.terms()) {
    std::map<std::string, int> powers;
    std::map<std::string, NatAtomP> atoms;
    for (const auto &[a, p] : t.mono.factors) {
      powers[a->key] += p;
      atoms[a->key] = a;
    }
    for (const auto &[a, p] : kt.mono.factors) {
      auto it = powers.find(a->key);
      if (it == powers.end() || it->second < p) return std::nullopt;
      it->second -= p;
    }
    Nat term = Nat(1).scale(t.coeff / kt.coeff);
    for (const auto &[key, p] : powers)
      for (int i = 0; i < p; ++i) term = term * NatImpl::atom(atoms[key]);
    q = q + term;
  }
  if (!q.hasIntCoeffs()) return std::nullopt;
  return q;
}

const std::vector<Nat::Term> &Nat::terms() const { return rep_->terms; }
const std::string &Nat::key() const { return rep_->key; }

Nat Nat::var(const NatVarId &v) {
  NatAtom a;
  a.kind = NatAtomKind::Var;
  a.var = v;
  a.key = "v" + std::to_string(v.id);
  return NatImpl::atom(NatImpl::mkAtom(std::move(a)));
}

Nat Nat::value(const NatVarId &v) {
  NatAtom a;
  a.kind = NatAtomKind::Value;
  a.var = v;
  a.key = "x" + std::to_string(v.id);
  return NatImpl::atom(NatImpl::mkAtom(std::move(a)));
}

Nat Nat::lookup(const NatVarId &array, const Nat &index) {
  NatAtom a;
  a.kind = NatAtomKind::Lookup;
  a.var = array;
  a.args = {index};
  a.key = "L" + std::to_string(array.id) + "[" + index.key() + "]";
  return NatImpl::atom(NatImpl::mkAtom(std::move(a)));
}

Nat Nat::operator+(const Nat &o) const {
  std::vector<Term> t = terms();
  t.insert(t.end(), o.terms().begin(), o.terms().end());
  return NatImpl::make(std::move(t));
}

Nat Nat::operator-() const { return scale(Rat(-1)); }
Nat Nat::operator-(const Nat &o) const { return *this + (-o); }

Nat Nat::scale(const Rat &r) const {
  std::vector<Term> t = terms();
  for (Term &x : t) x.coeff = x.coeff * r;
  return NatImpl::make(std::move(t));
}

Nat Nat::operator*(const Nat &o) const {
  std::vector<Term> out;
  for (const Term &a : terms())
    for (const Term &b : o.terms()) out.push_back(Term{NatImpl::mulMono(a.mono, b.mono), a.coeff * b.coeff});
  return NatImpl::make(std::move(out));
}

bool Nat::operator==(const Nat &o) const { return rep_ == o.rep_ || key() == o.key(); }

std::optional<Rat> Nat::asRat() const {
  if (terms().empty()) return Rat(0);
  if (terms().size() == 1 && terms()[0].mono.factors.empty()) return terms()[0].coeff;
  return std::nullopt;
}

std::optional<int64_t> Nat::asConst() const {
  auto r = asRat();
  if (r && r->isInt()) return r->num();
  return std::nullopt;
}

std::optional<NatVarId> Nat::asVar() const {
  if (terms().size() != 1) return std::nullopt;
  const Term &t = terms()[0];
  if (t.coeff != Rat(1) || t.mono.factors.size() != 1 || t.mono.factors[0].second != 1) return std::nullopt;
  const NatAtom &a = *t.mono.factors[0].first;
  if (a.kind != NatAtomKind::Var) return std::nullopt;
  return a.var;
}

bool Nat::hasIntCoeffs() const {
  for (const Term &t : terms())
    if (!t.coeff.isInt()) return false;
  return true;
}

bool NatImpl::mentionsAtom(const NatAtom &a, int64_t id) {
  if (a.kind == NatAtomKind::Sum) {
    if (a.var.id == id) return false;  // bound here
    for (const Nat &x : a.args)
      if (x.mentions(id)) return true;
    return false;
  }
  if ((a.kind == NatAtomKind::Var || a.kind == NatAtomKind::Value || a.kind == NatAtomKind::Lookup) && a.var.id == id)
    return true;
  for (const Nat &x : a.args)
    if (x.mentions(id)) return true;
  if (a.cond) {
    std::function<bool(const NatCond &)> walk = [&](const NatCond &c) {
      if (c.kind == NatCond::Cmp) return c.lhs.mentions(id);
      for (const NatCondP &k : c.args)
        if (walk(*k)) return true;
      return false;
    };
    if (walk(*a.cond)) return true;
  }
  return false;
}

bool Nat::mentions(int64_t id) const {
  for (const Term &t : terms())
    for (const auto &f : t.mono.factors)
      if (NatImpl::mentionsAtom(*f.first, id)) return true;
  return false;
}

void Nat::collectIds(std::vector<int64_t> &out) const {
  for (const Term &t : terms())
    for (const auto &f : t.mono.factors) {
      const NatAtom &a = *f.first;
      if (a.kind == NatAtomKind::Var || a.kind == NatAtomKind::Value || a.kind == NatAtomKind::Lookup)
        out.push_back(a.var.id);
      for (const Nat &x : a.args) x.collectIds(out);
    }
}

namespace {
bool condReadsData(const NatCond &c) {
  if (c.kind == NatCond::Cmp) return c.lhs.readsData();
  for (const NatCondP &a : c.args)
    if (a && condReadsData(*a)) return true;
  return false;
}
}  // namespace

bool Nat::readsData() const {
  for (const Term &t : terms())
    for (const auto &f : t.mono.factors) {
      const NatAtom &a = *f.first;
      if (a.kind == NatAtomKind::Value || a.kind == NatAtomKind::Lookup) return true;
      if (a.cond && condReadsData(*a.cond)) return true;
      for (const Nat &x : a.args)
        if (x.readsData()) return true;
    }
  return false;
}

// ---- integer-valuedness and division ----------------------------------------------------------------

/// A polynomial with rational coefficients is integer-valued on all integer inputs iff it is
/// integer on the grid {0..d_1} x ... x {0..d_k} (d_j = degree in atom j): the binomial basis
/// C(x, 0..d) spans the integer-valued polynomials and is determined by those points.
bool NatImpl::integerValued(const Nat &n) {
  if (n.hasIntCoeffs()) return true;
  std::vector<std::string> atoms;
  std::map<std::string, int> degree;
  for (const Nat::Term &t : n.terms())
    for (const auto &[a, p] : t.mono.factors) {
      if (!degree.count(a->key)) atoms.push_back(a->key);
      degree[a->key] = std::max(degree[a->key], p);
    }
  size_t points = 1;
  for (const std::string &a : atoms) {
    points *= static_cast<size_t>(degree[a] + 1);
    if (points > 4096) return false;
  }
  std::vector<int> at(atoms.size(), 0);
  for (size_t p = 0; p < points; ++p) {
    size_t rem = p;
    for (size_t j = 0; j < atoms.size(); ++j) {
      at[j] = static_cast<int>(rem % (degree[atoms[j]] + 1));
      rem /= (degree[atoms[j]] + 1);
    }
    Rat total(0);
    for (const Nat::Term &t : n.terms()) {
      Rat v = t.coeff;
      for (const auto &[a, pw] : t.mono.factors) {
        size_t j = static_cast<size_t>(std::find(atoms.begin(), atoms.end(), a->key) - atoms.begin());
        for (int k = 0; k < pw; ++k) v = v * Rat(at[j]);
      }
      total = total + v;
    }
    if (!total.isInt()) return false;
  }
  return true;
}

namespace {
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
}  // namespace

Nat Nat::div(const Nat &a, int64_t c) {
  if (c <= 0) throw CompileError(SourceLoc{}, fmt::format("division of a nat by {} (the divisor must be a positive constant)", c));
  if (c == 1) return a;
  if (auto k = a.asConst()) return Nat(floorDiv(*k, c));
  Nat q = a.scale(Rat(1, c));
  if (NatImpl::integerValued(q)) return q;
  // floor((c*X + Y) / c) = X + floor(Y / c) for integer-valued X: pull out the multiples of c.
  std::vector<Term> whole, rest;
  for (const Term &t : a.terms()) {
    Rat q1 = t.coeff / Rat(c);
    if (q1.isInt()) whole.push_back(Term{t.mono, q1});
    else rest.push_back(t);
  }
  Nat x = NatImpl::make(whole);
  Nat y = NatImpl::make(rest);
  if (auto k = y.asConst()) return x + Nat(floorDiv(*k, c));
  // A constant part of Y outside [0, c) can also move out: floor((Y' + k) / c) with k = c*q + r.
  std::vector<Term> yt = y.terms();
  Nat extra(0);
  if (!yt.empty() && yt[0].mono.factors.empty() && yt[0].coeff.isInt()) {
    int64_t k = yt[0].coeff.num();
    int64_t q1 = floorDiv(k, c);
    if (q1 != 0 && y.hasIntCoeffs()) {
      yt[0].coeff = Rat(k - q1 * c);
      extra = Nat(q1);
      y = NatImpl::make(yt);
    }
  }
  NatAtom atom;
  atom.kind = NatAtomKind::Div;
  atom.args = {y};
  atom.divisor = c;
  atom.key = "div(" + y.key() + "," + std::to_string(c) + ")";
  return x + extra + NatImpl::atom(NatImpl::mkAtom(std::move(atom)));
}

Nat Nat::mod(const Nat &a, int64_t c) {
  if (c <= 0) throw CompileError(SourceLoc{}, fmt::format("remainder of a nat by {} (the divisor must be a positive constant)", c));
  // a % c = a - c * floor(a / c): keeps (a / c) * c + a % c == a an identity of the normal form.
  return a - div(a, c) * Nat(c);
}

Nat Nat::min(const Nat &a, const Nat &b) {
  if (a == b) return a;
  Nat d = a - b;
  if (auto k = d.asRat()) return Rat(0) < *k ? b : a;
  NatFacts none;
  if (proveNonNegative(d, none)) return b;
  if (proveNonNegative(-d, none)) return a;
  const Nat &x = a.key() < b.key() ? a : b;
  const Nat &y = a.key() < b.key() ? b : a;
  NatAtom atom;
  atom.kind = NatAtomKind::Min;
  atom.args = {x, y};
  atom.key = "min(" + x.key() + "," + y.key() + ")";
  return NatImpl::atom(NatImpl::mkAtom(std::move(atom)));
}

Nat Nat::max(const Nat &a, const Nat &b) {
  if (a == b) return a;
  Nat d = a - b;
  if (auto k = d.asRat()) return Rat(0) < *k ? a : b;
  NatFacts none;
  if (proveNonNegative(d, none)) return a;
  if (proveNonNegative(-d, none)) return b;
  const Nat &x = a.key() < b.key() ? a : b;
  const Nat &y = a.key() < b.key() ? b : a;
  NatAtom atom;
  atom.kind = NatAtomKind::Max;
  atom.args = {x, y};
  atom.key = "max(" + x.key() + "," + y.key() + ")";
  return NatImpl::atom(NatImpl::mkAtom(std::move(atom)));
}

Nat Nat::cond(const NatCondP &c, const Nat &a, const Nat &b) {
  if (c->kind == NatCond::Const) return c->value ? a : b;
  if (a == b) return a;
  NatAtom atom;
  atom.kind = NatAtomKind::Cond;
  atom.cond = c;
  atom.args = {a, b};
  atom.key = "cond(" + c->key + "," + a.key() + "," + b.key() + ")";
  return NatImpl::atom(NatImpl::mkAtom(std::move(atom)));
}

// ---- Sigma ----------------------------------------------------------------------------------------

/// F_p(x) = sum_{t=0}^{x-1} t^p = 1/(p+1) * sum_{j=0}^{p} C(p+1, j) B_j x^{p+1-j}, B_1 = -1/2.
Nat NatImpl::faulhaber(int p, const Nat &x) {
  static std::vector<Rat> bernoulli;
  if (bernoulli.empty()) {
    bernoulli.push_back(Rat(1));
    for (int m = 1; m <= 9; ++m) {
      Rat s(0);
      int64_t binom = 1;  // C(m+1, j)
      for (int j = 0; j < m; ++j) {
        s = s + Rat(binom) * bernoulli[j];
        binom = binom * (m + 1 - j) / (j + 1);
      }
      bernoulli.push_back(-(s / Rat(m + 1)));
    }
  }
  Nat result(0);
  int64_t binom = 1;  // C(p+1, j)
  for (int j = 0; j <= p; ++j) {
    Rat c = Rat(binom) * bernoulli[j] / Rat(p + 1);
    if (!c.isZero()) {
      Nat pw(1);
      for (int k = 0; k < p + 1 - j; ++k) pw = pw * x;
      result = result + pw.scale(c);
    }
    binom = binom * (p + 1 - j) / (j + 1);
  }
  return result;
}

namespace {

Nat substVar(const Nat &n, const NatVarId &v, const Nat &by) {
  NatSubst s;
  s.vars.emplace(v.id, by);
  return substitute(n, s);
}

/// For the alpha-invariant key of a Sum atom: the depth of Sum binders inside a Nat.
int sumDepth(const Nat &n) {
  int d = 0;
  for (const Nat::Term &t : n.terms())
    for (const auto &f : t.mono.factors) {
      const NatAtom &a = *f.first;
      int inner = 0;
      for (const Nat &x : a.args) inner = std::max(inner, sumDepth(x));
      d = std::max(d, inner + (a.kind == NatAtomKind::Sum ? 1 : 0));
    }
  return d;
}

}  // namespace

Nat NatImpl::sumClosed(const NatVarId &i, const Nat &lo, const Nat &hi, const Nat &body) {
  Nat result(0);
  std::vector<Nat::Term> rest;
  for (const Nat::Term &t : body.terms()) {
    int power = 0;
    bool other = false;
    std::vector<std::pair<NatAtomP, int>> coeffFactors;
    for (const auto &[a, p] : t.mono.factors) {
      if (a->kind == NatAtomKind::Var && a->var.id == i.id) power = p;
      else if (mentionsAtom(*a, i.id)) other = true;
      else coeffFactors.emplace_back(a, p);
    }
    if (other || power > 8) {
      rest.push_back(t);
      continue;
    }
    Nat::Monomial m;
    m.factors = coeffFactors;
    m.key = monoKey(m.factors);
    Nat coeff = make({Nat::Term{m, t.coeff}});
    result = result + coeff * (faulhaber(power, hi) - faulhaber(power, lo));
  }
  Nat r = make(rest);
  // Telescoping: find g with g(i+1) - g(i) among the terms; each step removes terms.
  bool progress = true;
  while (progress && !r.isZero()) {
    progress = false;
    for (const Nat::Term &t : r.terms()) {
      Nat term = make({t});
      Nat iPlus1 = Nat::var(i) + Nat(1);
      Nat iMinus1 = Nat::var(i) - Nat(1);
      // The term is g(i+1): g(i) = term[i := i-1].
      Nat g1 = substVar(term, i, iMinus1);
      Nat r1 = r - (term - g1);
      if (numTerms(r1) < numTerms(r)) {
        result = result + substVar(g1, i, hi) - substVar(g1, i, lo);
        r = r1;
        progress = true;
        break;
      }
      // The term is -g(i): g = -term.
      Nat g2 = -term;
      Nat r2 = r - (substVar(g2, i, iPlus1) - g2);
      if (numTerms(r2) < numTerms(r)) {
        result = result + substVar(g2, i, hi) - substVar(g2, i, lo);
        r = r2;
        progress = true;
        break;
      }
    }
  }
  if (r.isZero()) return result;
  // Ragged split: sum(g = 0 .. (n+k-1)/k) c * min(k, n - g*k) = c * n, and over the first h
  // groups min(h*k, n). The partial form holds for h <= (n+k-1)/k, i.e. for sums over the
  // positions of the split, which are the only ones the compiler forms (offsets of a join).
  // c is the term's coefficient times its other factors, which must not mention g (a join of
  // windows of min(k, n - g*k) slices of C rows each: sum min(k, n - g*k) * C = n * C).
  if (r.terms().size() == 1 && lo.isZero()) {
    const Nat::Term &t = r.terms()[0];
    for (size_t f = 0; f < t.mono.factors.size(); ++f) {
      const NatAtom &mn = *t.mono.factors[f].first;
      if (t.mono.factors[f].second != 1 || mn.kind != NatAtomKind::Min) continue;
      Nat::Monomial others;
      bool free = true;
      for (size_t o = 0; o < t.mono.factors.size(); ++o) {
        if (o == f) continue;
        free = free && !mentionsAtom(*t.mono.factors[o].first, i.id);
        others.factors.push_back(t.mono.factors[o]);
      }
      if (!free) continue;
      others.key = monoKey(others.factors);
      Nat scale = make({Nat::Term{others, t.coeff}});
      for (int side = 0; side < 2; ++side) {
        auto k = mn.args[side].asConst();
        if (!k || *k < 1) continue;
        Nat n = mn.args[1 - side] + Nat::var(i) * Nat(*k);
        if (n.mentions(i.id)) continue;
        if (hi == Nat::div(n + Nat(*k - 1), *k)) return result + n * scale;
        return result + Nat::min(hi * Nat(*k), n) * scale;
      }
    }
  }
  // No closed form: keep an atom, keyed with the index renamed canonically (alpha-invariance).
  NatVarId canon{-(1000000 + sumDepth(r) + 1), i.name};
  Nat canonBody = substVar(r, i, Nat::var(canon));
  NatAtom atom;
  atom.kind = NatAtomKind::Sum;
  atom.var = i;
  atom.args = {lo, hi, r};
  atom.key = "sum(" + lo.key() + "," + hi.key() + "," + std::to_string(canon.id) + ":" + canonBody.key() + ")";
  return result + NatImpl::atom(mkAtom(std::move(atom)));
}

Nat Nat::sum(const NatVarId &i, const Nat &lo, const Nat &hi, const Nat &body) {
  if (lo == hi) return Nat(0);
  return NatImpl::sumClosed(i, lo, hi, body);
}

// ---- conditions -------------------------------------------------------------------------------------

namespace {
NatCondP mkCond(NatCond c) { return std::make_shared<const NatCond>(std::move(c)); }
}  // namespace

NatCondP NatCond::constant(bool v) {
  NatCond c;
  c.kind = Const;
  c.value = v;
  c.key = v ? "T" : "F";
  return mkCond(std::move(c));
}

NatCondP NatCond::compare(const std::string &op, const Nat &a, const Nat &b) {
  NatCmp cmp;
  Nat lhs;
  if (op == "==") { cmp = NatCmp::Eq; lhs = a - b; }
  else if (op == "!=") { cmp = NatCmp::Ne; lhs = a - b; }
  else if (op == "<") { cmp = NatCmp::Lt; lhs = a - b; }
  else if (op == "<=") { cmp = NatCmp::Le; lhs = a - b; }
  else if (op == ">") { cmp = NatCmp::Lt; lhs = b - a; }
  else { cmp = NatCmp::Le; lhs = b - a; }
  if (auto k = lhs.asRat()) {
    Rat z(0);
    switch (cmp) {
      case NatCmp::Eq: return constant(*k == z);
      case NatCmp::Ne: return constant(*k != z);
      case NatCmp::Lt: return constant(*k < z);
      case NatCmp::Le: return constant(!(z < *k));
    }
  }
  NatCond c;
  c.kind = Cmp;
  c.cmp = cmp;
  c.lhs = lhs;
  static const char *names[] = {"==", "!=", "<", "<="};
  c.key = std::string("(") + lhs.key() + names[static_cast<int>(cmp)] + "0)";
  return mkCond(std::move(c));
}

NatCondP NatCond::conj(const NatCondP &a, const NatCondP &b) {
  if (a->kind == Const) return a->value ? b : a;
  if (b->kind == Const) return b->value ? a : b;
  NatCond c;
  c.kind = And;
  c.args = {a, b};
  c.key = "(" + a->key + "&" + b->key + ")";
  return mkCond(std::move(c));
}

NatCondP NatCond::disj(const NatCondP &a, const NatCondP &b) {
  if (a->kind == Const) return a->value ? a : b;
  if (b->kind == Const) return b->value ? b : a;
  NatCond c;
  c.kind = Or;
  c.args = {a, b};
  c.key = "(" + a->key + "|" + b->key + ")";
  return mkCond(std::move(c));
}

NatCondP NatCond::negate(const NatCondP &a) {
  if (a->kind == Const) return constant(!a->value);
  NatCond c;
  c.kind = Not;
  c.args = {a};
  c.key = "!" + a->key;
  return mkCond(std::move(c));
}

// ---- substitution -----------------------------------------------------------------------------------

NatCondP substitute(const NatCondP &c, const NatSubst &s) {
  switch (c->kind) {
    case NatCond::Const: return c;
    case NatCond::Cmp: {
      Nat l = substitute(c->lhs, s);
      static const char *names[] = {"==", "!=", "<", "<="};
      return NatCond::compare(names[static_cast<int>(c->cmp)], l, Nat(0));
    }
    case NatCond::And: return NatCond::conj(substitute(c->args[0], s), substitute(c->args[1], s));
    case NatCond::Or: return NatCond::disj(substitute(c->args[0], s), substitute(c->args[1], s));
    case NatCond::Not: return NatCond::negate(substitute(c->args[0], s));
  }
  return c;
}

namespace {

Nat substAtom(const NatAtomP &ap, const NatSubst &s) {
  const NatAtom &a = *ap;
  switch (a.kind) {
    case NatAtomKind::Var:
    case NatAtomKind::Value: {
      auto it = s.vars.find(a.var.id);
      if (it != s.vars.end()) return it->second;
      return NatImpl::atom(ap);
    }
    case NatAtomKind::Lookup: {
      Nat idx = substitute(a.args[0], s);
      auto fn = s.arrayFns.find(a.var.id);
      if (fn != s.arrayFns.end()) return fn->second(idx);
      auto it = s.arrays.find(a.var.id);
      NatVarId arr = it != s.arrays.end() ? it->second : a.var;
      // Unchanged: the same atom. (Equal keys are not enough: a variable renamed to a new name
      // with the same id keeps its key, and the index should print the new name.)
      bool renamed = false;
      for (const auto &[id, n] : s.vars) renamed = renamed || a.args[0].mentions(id);
      if (arr.id == a.var.id && idx == a.args[0] && !renamed) return NatImpl::atom(ap);
      return Nat::lookup(arr, idx);
    }
    case NatAtomKind::Min: return Nat::min(substitute(a.args[0], s), substitute(a.args[1], s));
    case NatAtomKind::Max: return Nat::max(substitute(a.args[0], s), substitute(a.args[1], s));
    case NatAtomKind::Div: return Nat::div(substitute(a.args[0], s), a.divisor);
    case NatAtomKind::Mod: return Nat::mod(substitute(a.args[0], s), a.divisor);
    case NatAtomKind::Cond:
      return Nat::cond(substitute(a.cond, s), substitute(a.args[0], s), substitute(a.args[1], s));
    case NatAtomKind::Sum: {
      // The bound index is never substituted; rename it if the substitution could capture it.
      NatSubst inner = s;
      inner.vars.erase(a.var.id);
      NatVarId i = a.var;
      bool capture = false;
      for (const auto &[id, n] : inner.vars)
        if (n.mentions(a.var.id)) capture = true;
      Nat body = a.args[2];
      if (capture) {
        NatVarId fresh = freshNatVar(a.var.name);
        NatSubst ren;
        ren.vars.emplace(a.var.id, Nat::var(fresh));
        body = substitute(body, ren);
        i = fresh;
      }
      return Nat::sum(i, substitute(a.args[0], s), substitute(a.args[1], s), substitute(body, inner));
    }
  }
  return NatImpl::atom(ap);
}

}  // namespace

namespace {

/// Could s change n? False when no variable, value or array n names (bound sum indices
/// included, conservatively) is one s replaces: then n is its own substitution, shared.
bool substitutionReaches(const Nat &n, const NatSubst &s);

bool substitutionReachesCond(const NatCond &c, const NatSubst &s) {
  if (c.kind == NatCond::Cmp) return substitutionReaches(c.lhs, s);
  for (const NatCondP &a : c.args)
    if (a && substitutionReachesCond(*a, s)) return true;
  return false;
}

bool substitutionReaches(const Nat &n, const NatSubst &s) {
  for (const Nat::Term &t : n.terms())
    for (const auto &[ap, power] : t.mono.factors) {
      const NatAtom &a = *ap;
      if (a.kind != NatAtomKind::Min && a.kind != NatAtomKind::Max && a.kind != NatAtomKind::Div &&
          a.kind != NatAtomKind::Mod && a.kind != NatAtomKind::Cond) {
        int64_t id = a.var.id;
        if (s.vars.count(id) || s.arrays.count(id) || s.arrayFns.count(id)) return true;
      }
      for (const Nat &x : a.args)
        if (substitutionReaches(x, s)) return true;
      if (a.cond && substitutionReachesCond(*a.cond, s)) return true;
    }
  return false;
}

}  // namespace

Nat substitute(const Nat &n, const NatSubst &s) {
  if (s.empty() || !substitutionReaches(n, s)) return n;
  Nat out(0);
  for (const Nat::Term &t : n.terms()) {
    Nat prod(1);
    for (const auto &[a, p] : t.mono.factors) {
      Nat sa = substAtom(a, s);
      for (int k = 0; k < p; ++k) prod = prod * sa;
    }
    out = out + prod.scale(t.coeff);
  }
  return out;
}

// ---- proofs -----------------------------------------------------------------------------------------

namespace {

bool proveNonNegativeAt(const Nat &n, const NatFacts &facts, int depth);

/// Var, Lookup and Value atoms are naturals, and so is a remainder by a positive constant. The
/// other atoms are only as non-negative as their arguments: (m - n) / 2, min(n - m, 4), a Cond
/// with a negative branch or a Sum with a negative body can all be negative, since nat
/// subtraction is exact.
bool atomNonNegative(const NatAtom &a, const NatFacts &facts, int depth) {
  constexpr int kMaxDepth = 8;
  switch (a.kind) {
    case NatAtomKind::Var:
    case NatAtomKind::Lookup:
    case NatAtomKind::Value:
    case NatAtomKind::Mod: return true;
    default: break;
  }
  if (depth >= kMaxDepth) return false;
  switch (a.kind) {
    case NatAtomKind::Min:
      return proveNonNegativeAt(a.args[0], facts, depth + 1) && proveNonNegativeAt(a.args[1], facts, depth + 1);
    case NatAtomKind::Max:
      return proveNonNegativeAt(a.args[0], facts, depth + 1) || proveNonNegativeAt(a.args[1], facts, depth + 1);
    case NatAtomKind::Div: return proveNonNegativeAt(a.args[0], facts, depth + 1);
    case NatAtomKind::Cond:
      return proveNonNegativeAt(a.args[0], facts, depth + 1) && proveNonNegativeAt(a.args[1], facts, depth + 1);
    case NatAtomKind::Sum: {
      if (!proveNonNegativeAt(a.args[1] - a.args[0], facts, depth + 1)) return false;
      NatFacts inner = facts;
      inner.ranges.push_back({a.var.id, a.args[0], a.args[1]});
      return proveNonNegativeAt(a.args[2], inner, depth + 1);
    }
    default: return false;
  }
}

/// Every term is a non-negative coefficient times a product of atoms whose odd powers are of
/// non-negative atoms.
bool allTermsNonNegative(const Nat &n, const NatFacts &facts, int depth) {
  for (const Nat::Term &t : n.terms()) {
    if (t.coeff < Rat(0)) return false;
    for (const auto &[a, p] : t.mono.factors)
      if (p % 2 == 1 && !atomNonNegative(*a, facts, depth)) return false;
  }
  return true;
}

bool allCoeffsNonNegative(const Nat &n) {
  for (const Nat::Term &t : n.terms())
    if (t.coeff < Rat(0)) return false;
  return true;
}

size_t countNegative(const Nat &n) {
  size_t k = 0;
  for (const Nat::Term &t : n.terms())
    if (t.coeff < Rat(0)) ++k;
  return k;
}

}  // namespace

bool proveNonNegative(const Nat &n, const NatFacts &facts) { return proveNonNegativeAt(n, facts, 0); }

namespace {

/// n with each term c floor(a / d) (c > 0, the quotient alone) replaced by c a / d, which is
/// at least as large; none when n has no such term.
std::optional<Nat> quotientsRaised(const Nat &n) {
  bool raised = false;
  Nat out(0);
  for (const Nat::Term &t : n.terms()) {
    if (Rat(0) < t.coeff && t.mono.factors.size() == 1 && t.mono.factors[0].second == 1 &&
        t.mono.factors[0].first->kind == NatAtomKind::Div) {
      const NatAtom &q = *t.mono.factors[0].first;
      out = out + q.args[0].scale(t.coeff / Rat(q.divisor));
      raised = true;
    } else {
      out = out + Nat::fromTerms({t});
    }
  }
  if (!raised) return std::nullopt;
  return out;
}

bool proveNonNegativeAt(const Nat &n, const NatFacts &facts, int depth) {
  if (allTermsNonNegative(n, facts, depth)) return true;
  // Facts give non-negative linear forms f: v - lo and hi - 1 - v. Search n = sum c_j f_j + rest
  // with c_j >= 0 and rest having non-negative coefficients (a small greedy search).
  std::vector<Nat> forms;
  for (const NatFacts::Range &r : facts.ranges) {
    Nat v = Nat::var(NatVarId{r.var, ""});
    forms.push_back(v - r.lo);
    forms.push_back(r.hi - Nat(1) - v);
    // A block index below (n + b - 1) / b: with the quotient raised to (n + b - 1) / b exactly
    // the form stays non-negative and is linear in n, so that b v <= n - 1 follows.
    if (std::optional<Nat> relaxed = quotientsRaised(r.hi - Nat(1) - v)) forms.push_back(*relaxed);
  }
  Nat cur = n;
  for (int step = 0; step < 8 && !allCoeffsNonNegative(cur); ++step) {
    bool improved = false;
    for (const Nat::Term &t : cur.terms()) {
      if (!(t.coeff < Rat(0))) continue;
      for (const Nat &f : forms) {
        for (const Nat::Term &ft : f.terms()) {
          // Subtracting c*f with c > 0 cancels the negative term when f has it negative too.
          if (ft.mono.key != t.mono.key || !(ft.coeff < Rat(0))) continue;
          Rat c = t.coeff / ft.coeff;  // > 0
          Nat next = cur - f.scale(c);
          if (countNegative(next) < countNegative(cur) ||
              (countNegative(next) == countNegative(cur) && next.terms().size() < cur.terms().size())) {
            cur = next;
            improved = true;
            break;
          }
        }
        if (improved) break;
      }
      if (improved) break;
    }
    if (!improved) break;
  }
  if (allTermsNonNegative(cur, facts, depth)) return true;
  // -c min(a, b) is at least -c a and -c b, c max(a, b) at least c a and c b: n is
  // non-negative when it is with the first such term replaced by either.
  if (depth >= 8) return false;
  for (const Nat::Term &t : n.terms()) {
    if (t.mono.factors.size() != 1 || t.mono.factors[0].second != 1) continue;
    const NatAtom &a = *t.mono.factors[0].first;
    bool negative = t.coeff < Rat(0);
    if (!(negative ? a.kind == NatAtomKind::Min : a.kind == NatAtomKind::Max)) continue;
    Nat rest = n - Nat::fromTerms({t});
    for (const Nat &arm : a.args)
      if (proveNonNegativeAt(rest + arm.scale(t.coeff), facts, depth + 1)) return true;
    return false;
  }
  return false;
}

}  // namespace

// ---- bounds ---------------------------------------------------------------------------------------

namespace {

struct Bounder {
  const NatFacts &facts;
  int depth = 0;

  const NatFacts::Range *range(int64_t id) const {
    for (const NatFacts::Range &r : facts.ranges)
      if (r.var == id) return &r;
    return nullptr;
  }
  bool varies(const Nat &n) const {
    for (const NatFacts::Range &r : facts.ranges)
      if (n.mentions(r.var)) return true;
    return false;
  }

  std::optional<Nat> bound(const Nat &n, bool upper) {
    if (++depth > 64) return std::nullopt;
    struct Leave {
      int &d;
      ~Leave() { --d; }
    } leave{depth};
    if (!varies(n)) return n;
    Nat total(0);
    for (const Nat::Term &t : n.terms()) {
      bool up = (Rat(0) < t.coeff) == upper;  // a negative coefficient flips the direction
      Nat prod(1);
      for (const auto &[a, p] : t.mono.factors) {
        // Products of naturals are monotone in each factor only when the factors are >= 0.
        if (t.mono.factors.size() > 1 || p > 1) {
          auto lo = atomBound(*a, false);
          if (!lo || !proveNonNegative(*lo, NatFacts{})) return std::nullopt;
        }
        auto b = atomBound(*a, up);
        if (!b) return std::nullopt;
        for (int k = 0; k < p; ++k) prod = prod * *b;
      }
      total = total + prod.scale(t.coeff);
    }
    return total;
  }

  std::optional<Nat> atomBound(const NatAtom &a, bool upper) {
    Nat self = Nat::fromAtom(std::make_shared<const NatAtom>(a));
    if (!varies(self)) return self;
    switch (a.kind) {
      case NatAtomKind::Var: {
        const NatFacts::Range *r = range(a.var.id);
        if (!r) return self;
        return bound(upper ? r->hi - Nat(1) : r->lo, upper);
      }
      case NatAtomKind::Value:
      case NatAtomKind::Lookup:
      case NatAtomKind::Sum:
        // A value read at a position that varies: only its sign is known.
        if (upper) return std::nullopt;
        return Nat(0);
      case NatAtomKind::Min:
      case NatAtomKind::Max: {
        auto x = bound(a.args[0], upper), y = bound(a.args[1], upper);
        bool isMin = a.kind == NatAtomKind::Min;
        if (x && y) return isMin ? Nat::min(*x, *y) : Nat::max(*x, *y);
        // min(a, b) <= a and <= b; max(a, b) >= a and >= b: one side suffices then.
        if (isMin == upper) return x ? x : y;
        return std::nullopt;
      }
      case NatAtomKind::Div: {
        auto x = bound(a.args[0], upper);
        if (!x) return std::nullopt;
        return Nat::div(*x, a.divisor);
      }
      case NatAtomKind::Mod:
        return upper ? std::optional<Nat>(Nat(a.divisor - 1)) : std::optional<Nat>(Nat(0));
      case NatAtomKind::Cond: {
        auto x = bound(a.args[0], upper), y = bound(a.args[1], upper);
        if (!x || !y) return std::nullopt;
        return upper ? Nat::max(*x, *y) : Nat::min(*x, *y);
      }
    }
    return std::nullopt;
  }
};

/// The constant arm of a bound like min(4, n): the smallest constant it is at most.
std::optional<int64_t> constantArm(const Nat &n) {
  if (auto k = n.asConst()) return k;
  if (n.terms().size() == 1 && n.terms()[0].coeff == Rat(1) && n.terms()[0].mono.factors.size() == 1 &&
      n.terms()[0].mono.factors[0].second == 1) {
    const NatAtom &a = *n.terms()[0].mono.factors[0].first;
    if (a.kind == NatAtomKind::Min) {
      auto x = constantArm(a.args[0]), y = constantArm(a.args[1]);
      if (x && y) return std::min(*x, *y);
      return x ? x : y;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<Nat> upperBound(const Nat &n, const NatFacts &facts) {
  Bounder b{facts};
  return b.bound(n, true);
}

std::optional<Nat> lowerBound(const Nat &n, const NatFacts &facts) {
  Bounder b{facts};
  return b.bound(n, false);
}

namespace {
std::optional<std::vector<Nat>> armsOf(const Nat &n, NatAtomKind kind) {
  const std::vector<Nat::Term> &terms = n.terms();
  if (terms.size() != 1 || !(terms[0].coeff == Rat(1)) || terms[0].mono.factors.size() != 1 || terms[0].mono.factors[0].second != 1)
    return std::nullopt;
  const NatAtom &a = *terms[0].mono.factors[0].first;
  if (a.kind != kind) return std::nullopt;
  return a.args;
}
}  // namespace

std::optional<std::vector<Nat>> minArms(const Nat &n) { return armsOf(n, NatAtomKind::Min); }
std::optional<std::vector<Nat>> maxArms(const Nat &n) { return armsOf(n, NatAtomKind::Max); }

std::optional<int64_t> constUpperBound(const Nat &n, const NatFacts &facts) {
  auto u = upperBound(n, facts);
  if (!u) return std::nullopt;
  return constantArm(*u);
}

std::optional<int64_t> constExtentBound(const Nat &lo, const Nat &hi) {
  if (std::optional<int64_t> c = constUpperBound(hi - lo, NatFacts{})) return c;
  std::optional<std::vector<Nat>> arms = minArms(hi);
  if (!arms) return std::nullopt;
  std::optional<int64_t> best;
  for (const Nat &arm : *arms)
    if (std::optional<int64_t> c = constExtentBound(lo, arm)) best = best ? std::min(*best, *c) : *c;
  return best;
}

// ---- evaluation -----------------------------------------------------------------------------------

namespace {

std::optional<Rat> evalRat(const Nat &n, const NatEnv &env);

std::optional<int64_t> evalAtom(const NatAtom &a, const NatEnv &env) {
  switch (a.kind) {
    case NatAtomKind::Var:
    case NatAtomKind::Value: {
      auto it = env.vars.find(a.var.id);
      if (it == env.vars.end()) return std::nullopt;
      return it->second;
    }
    case NatAtomKind::Lookup: {
      auto idx = evaluate(a.args[0], env);
      if (!idx || !env.lookup) return std::nullopt;
      return env.lookup(a.var.id, *idx);
    }
    case NatAtomKind::Min:
    case NatAtomKind::Max: {
      auto x = evaluate(a.args[0], env), y = evaluate(a.args[1], env);
      if (!x || !y) return std::nullopt;
      return a.kind == NatAtomKind::Min ? std::min(*x, *y) : std::max(*x, *y);
    }
    case NatAtomKind::Div:
    case NatAtomKind::Mod: {
      auto x = evaluate(a.args[0], env);
      if (!x) return std::nullopt;
      int64_t q = floorDiv(*x, a.divisor);
      return a.kind == NatAtomKind::Div ? q : *x - q * a.divisor;
    }
    case NatAtomKind::Cond: {
      auto c = evaluate(a.cond, env);
      if (!c) return std::nullopt;
      return evaluate(a.args[*c ? 0 : 1], env);
    }
    case NatAtomKind::Sum: {
      auto lo = evaluate(a.args[0], env), hi = evaluate(a.args[1], env);
      if (!lo || !hi || *hi - *lo > 1000000) return std::nullopt;
      NatEnv inner = env;
      int64_t total = 0;
      for (int64_t i = *lo; i < *hi; ++i) {
        inner.vars[a.var.id] = i;
        auto v = evaluate(a.args[2], inner);
        if (!v) return std::nullopt;
        total += *v;
      }
      return total;
    }
  }
  return std::nullopt;
}

std::optional<Rat> evalRat(const Nat &n, const NatEnv &env) {
  Rat total(0);
  for (const Nat::Term &t : n.terms()) {
    Rat v = t.coeff;
    for (const auto &[a, p] : t.mono.factors) {
      auto x = evalAtom(*a, env);
      if (!x) return std::nullopt;
      for (int k = 0; k < p; ++k) v = v * Rat(*x);
    }
    total = total + v;
  }
  return total;
}

}  // namespace

std::optional<int64_t> evaluate(const Nat &n, const NatEnv &env) {
  auto r = evalRat(n, env);
  if (!r || !r->isInt()) return std::nullopt;
  return r->num();
}

std::optional<bool> evaluate(const NatCondP &c, const NatEnv &env) {
  switch (c->kind) {
    case NatCond::Const: return c->value;
    case NatCond::Cmp: {
      auto v = evaluate(c->lhs, env);
      if (!v) return std::nullopt;
      switch (c->cmp) {
        case NatCmp::Eq: return *v == 0;
        case NatCmp::Ne: return *v != 0;
        case NatCmp::Lt: return *v < 0;
        case NatCmp::Le: return *v <= 0;
      }
      return std::nullopt;
    }
    case NatCond::And:
    case NatCond::Or: {
      auto x = evaluate(c->args[0], env), y = evaluate(c->args[1], env);
      if (!x || !y) return std::nullopt;
      return c->kind == NatCond::And ? (*x && *y) : (*x || *y);
    }
    case NatCond::Not: {
      auto x = evaluate(c->args[0], env);
      if (!x) return std::nullopt;
      return !*x;
    }
  }
  return std::nullopt;
}

// ---- printing ---------------------------------------------------------------------------------------

namespace {

std::string atomStr(const NatAtom &a);

bool isSimple(const Nat &n) {
  if (n.terms().size() != 1) return n.terms().empty();
  const Nat::Term &t = n.terms()[0];
  return t.coeff == Rat(1) ? t.mono.factors.size() == 1 && t.mono.factors[0].second == 1 : t.mono.factors.empty() && Rat(0) < t.coeff;
}

std::string paren(const Nat &n) { return isSimple(n) ? n.str() : "(" + n.str() + ")"; }

std::string atomStr(const NatAtom &a) {
  switch (a.kind) {
    case NatAtomKind::Var:
    case NatAtomKind::Value: return a.var.name.empty() ? "?" + std::to_string(a.var.id) : a.var.name;
    case NatAtomKind::Lookup: return a.var.name + "@" + paren(a.args[0]);
    case NatAtomKind::Min: return "min(" + a.args[0].str() + ", " + a.args[1].str() + ")";
    case NatAtomKind::Max: return "max(" + a.args[0].str() + ", " + a.args[1].str() + ")";
    case NatAtomKind::Div: return paren(a.args[0]) + " / " + std::to_string(a.divisor);
    case NatAtomKind::Mod: return paren(a.args[0]) + " % " + std::to_string(a.divisor);
    case NatAtomKind::Cond: return "(" + a.cond->str() + " ? " + a.args[0].str() + " : " + a.args[1].str() + ")";
    case NatAtomKind::Sum:
      return "sum(" + a.var.name + " = " + a.args[0].str() + " .. " + a.args[1].str() + ") " + paren(a.args[2]);
  }
  return "?";
}

std::string monoStr(const Nat::Monomial &m) {
  std::string s;
  for (const auto &[a, p] : m.factors) {
    std::string as = atomStr(*a);
    bool needParen = a->kind == NatAtomKind::Div || a->kind == NatAtomKind::Mod || a->kind == NatAtomKind::Sum;
    if (needParen && m.factors.size() > 1) as = "(" + as + ")";
    for (int k = 0; k < p; ++k) s += (s.empty() ? "" : "*") + as;
  }
  return s;
}

}  // namespace

std::string Nat::str() const {
  if (terms().empty()) return "0";
  // Positive terms first, then negative ones; the constant last within each group.
  std::vector<const Term *> order;
  for (const Term &t : terms())
    if (!t.mono.factors.empty() && !(t.coeff < Rat(0))) order.push_back(&t);
  for (const Term &t : terms())
    if (t.mono.factors.empty() && !(t.coeff < Rat(0))) order.push_back(&t);
  for (const Term &t : terms())
    if (!t.mono.factors.empty() && t.coeff < Rat(0)) order.push_back(&t);
  for (const Term &t : terms())
    if (t.mono.factors.empty() && t.coeff < Rat(0)) order.push_back(&t);
  std::string s;
  for (const Term *t : order) {
    bool neg = t->coeff < Rat(0);
    Rat c = neg ? -t->coeff : t->coeff;
    std::string body;
    if (t->mono.factors.empty()) {
      body = c.str();
    } else {
      body = monoStr(t->mono);
      if (c.num() != 1) body = std::to_string(c.num()) + "*" + body;
      if (c.den() != 1) body += "/" + std::to_string(c.den());
    }
    if (s.empty()) s = neg ? "-" + body : body;
    else s += (neg ? " - " : " + ") + body;
  }
  return s;
}

std::string NatCond::str() const {
  switch (kind) {
    case Const: return value ? "true" : "false";
    case Cmp: {
      static const char *names[] = {"==", "!=", "<", "<="};
      // lhs op 0: print as "a op b" splitting positive and negative terms.
      std::vector<Nat::Term> pos, neg;
      for (const Nat::Term &t : lhs.terms()) {
        if (t.coeff < Rat(0)) neg.push_back(Nat::Term{t.mono, -t.coeff});
        else pos.push_back(t);
      }
      return Nat::fromTerms(pos).str() + " " + names[static_cast<int>(cmp)] + " " + Nat::fromTerms(neg).str();
    }
    case And: return args[0]->str() + " && " + args[1]->str();
    case Or: return "(" + args[0]->str() + " || " + args[1]->str() + ")";
    case Not: return "!(" + args[0]->str() + ")";
  }
  return "?";
}

}  // namespace spl
