//===- FieldCheck.cpp - Values against the schema -------------------------===//
#include "SemaImpl.h"

#include "llvm/ADT/StringExtras.h"

namespace rapid::sema {
namespace {

/// "a size (GB)": the dimension in the words of the unit the user wrote.
std::string foundQuantity(const Value &v, const ast::Expr *written) {
  auto *n = llvm::dyn_cast_or_null<ast::NumberExpr>(written);
  if (!n || n->unit.empty() || v.q.dim.isNumber())
    return describeDim(v.q.dim);
  std::string d = describeDim(v.q.dim);
  return d.substr(0, d.find(" (")) + " (" + n->unit + ")";
}

std::string exampleFor(const FieldSpec &spec) {
  Dim d = spec.dim;
  if (d == Dim::size()) return "80 GiB";
  if (d == Dim::time()) return "500 ns";
  if (d == Dim::frequency()) return spec.path.ends_with("rate") ? "8 req/s" : "1.41 GHz"; // arrivals, or a clock
  if (d == Dim::bandwidth()) return "100 GB/s";
  if (d == Dim::compute()) return "312 TFLOP/s";
  return "";
}

std::string unitHint(const FieldSpec &spec, const Value &v, const ast::Expr *written) {
  auto *n = llvm::dyn_cast_or_null<ast::NumberExpr>(written);
  if (n && !n->unit.empty()) {
    std::string s = suggestUnit(n->unit, spec.dim);
    return s.empty() ? "" : fmt::format("; did you mean '{}'?", s);
  }
  if (v.q.dim.isNumber() && !exampleFor(spec).empty())
    return fmt::format("; add a unit, as in '{}'", exampleFor(spec));
  return "";
}

/// The lower side of a field's range, as in "'x' must be positive".
bool checkLow(const FieldSpec &spec, const Value &v, llvm::SMRange at, DiagnosticEngine &diags) {
  double x = v.num();
  std::string path(spec.path);
  switch (spec.bound.low) {
  case FieldBound::Low::Any: return true;
  case FieldBound::Low::Positive:
    if (x > 0) return true;
    diags.report(DiagID::NotPositive, at, path, v.str());
    return false;
  case FieldBound::Low::NonNegative:
    if (x >= 0) return true;
    diags.report(DiagID::OutOfRange, at, path, "at least 0", v.str());
    return false;
  case FieldBound::Low::Fraction:
    if (x > 0 && x <= 1) return true;
    diags.report(DiagID::OutOfRange, at, path, "above 0 % and at most 100 %", v.str());
    return false;
  case FieldBound::Low::AtLeastOne:
    if (x >= 1) return true;
    diags.report(DiagID::OutOfRange, at, path, "at least 1", v.str());
    return false;
  }
  return true;
}

/// "from 1 to 1048576", "at most 1e+18 B/s": the range a value above the
/// field's limit missed.
std::string rangeText(const FieldSpec &spec) {
  std::string max = formatNumber(spec.bound.max);
  if (!spec.dim.isNumber()) max += " " + baseUnitName(spec.dim);
  if (spec.type != FieldType::Integer) return "at most " + max;
  return fmt::format("from {} to {}", spec.bound.low == FieldBound::Low::NonNegative ? 0 : 1, max);
}

bool checkBound(const FieldSpec &spec, const Value &v, llvm::SMRange at, DiagnosticEngine &diags) {
  if (!checkLow(spec, v, at, diags)) return false;
  if (v.num() <= spec.bound.max) return true;
  diags.report(DiagID::OutOfRange, at, std::string(spec.path), rangeText(spec), v.str());
  return false;
}

} // namespace

Value checkField(const FieldSpec &spec, Value v, const ast::Expr *written, llvm::SMRange fallback,
                 DiagnosticEngine &diags) {
  if (v.isError()) return v;
  llvm::SMRange at = written ? written->getRange() : fallback;
  std::string path(spec.path);
  auto wrongKind = [&](const std::string &expected) {
    diags.report(DiagID::ExpectedKind, at, expected, v.describe());
    return Value::error();
  };
  switch (spec.type) {
  case FieldType::Quantity:
    if (!v.isNumber()) return wrongKind(describeDim(spec.dim));
    if (v.q.dim != spec.dim) {
      diags.report(DiagID::UnitMismatch, at, describeDim(spec.dim), foundQuantity(v, written),
                   unitHint(spec, v, written));
      return Value::error();
    }
    break;
  case FieldType::Integer:
    if (!v.isNumber()) return wrongKind("a whole number");
    if (!v.q.dim.isNumber()) {
      diags.report(DiagID::UnitMismatch, at, "a plain number", foundQuantity(v, written), "");
      return Value::error();
    }
    if (!v.isInteger()) {
      diags.report(DiagID::NotAnInteger, at, path, v.str());
      return Value::error();
    }
    break;
  case FieldType::Bool:
    if (v.kind != Value::Kind::Bool) return wrongKind("on or off");
    return v;
  case FieldType::Choice: {
    if (v.kind == Value::Kind::Symbol && spec.isChoice(v.s))
      return v;
    std::vector<std::string> names(spec.choices.begin(), spec.choices.end());
    diags.report(DiagID::UnknownChoice, at, v.str(), path, llvm::join(names, ", ") +
                 (v.kind == Value::Kind::Symbol ? didYouMean(v.s, names) : ""));
    return Value::error();
  }
  case FieldType::Ref:
  case FieldType::Name:
    if (v.kind != Value::Kind::Symbol) return wrongKind("a name");
    return v;
  case FieldType::Text:
    if (v.kind != Value::Kind::String) return wrongKind("a quoted string");
    return v;
  case FieldType::Distribution:
    if (v.isNumber() && v.q.dim.isNumber()) {
      Value c;
      c.kind = Value::Kind::Call;
      c.s = "constant";
      c.items = {v};
      c.range = v.range;
      return c;
    }
    if (v.kind != Value::Kind::Call) return wrongKind("a distribution such as normal(0.5, 0.1)");
    return v;
  }
  return checkBound(spec, v, at, diags) ? v : Value::error();
}

} // namespace rapid::sema
