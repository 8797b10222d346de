//===- Typed.cpp - Checked values into typed members ----------------------===//
#include "SemaImpl.h"

namespace rapid::sema {

void assign(const Value &v, int64_t &out) { out = int64_t(v.num()); }
void assign(const Value &v, double &out) { out = v.num(); }
void assign(const Value &v, bool &out) { out = v.b; }
void assign(const Value &v, DimName &out) { out.name = v.s; }
void assign(const Value &v, std::string &out) { out = v.s; }

/// `normal(m, sd)`, `uniform(lo, hi)`, `constant(v)`; checkField has turned
/// a plain number into `constant(v)`.
void assign(const Value &v, Distribution &out) {
  using K = Distribution::Kind;
  out.kind = v.s == "normal" ? K::Normal : v.s == "uniform" ? K::Uniform : K::Constant;
  out.a = !v.items.empty() ? v.items[0].num() : 0;
  out.b = v.items.size() > 1 ? v.items[1].num() : out.a;
}

} // namespace rapid::sema
