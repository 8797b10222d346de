//===- Docs.cpp - The field tables as docs/language.md shows them ---------===//
//
// docs/language.md carries these tables between `<!-- fields: NAME -->`
// and `<!-- end fields -->` markers; test/Driver/field-tables-docs.test
// fails when they differ from what this prints (`rapidc
// --print-field-tables`), so the docs follow the .def tables.
//===----------------------------------------------------------------------===//
#include "rapid/Spec/Docs.h"

#include "rapid/Spec/Schema.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace rapid {
namespace {

std::string low(FieldBound::Low l) {
  switch (l) {
  case FieldBound::Low::Any: return "";
  case FieldBound::Low::Positive: return ", > 0";
  case FieldBound::Low::NonNegative: return ", >= 0";
  case FieldBound::Low::Fraction: return ", above 0 and at most 100 %";
  case FieldBound::Low::AtLeastOne: return ", >= 1";
  }
  return "";
}

/// ", > 0, <= 2^20": the lower side, then the upper limit in base units,
/// written as the power of two or ten it is where it is one.
std::string bound(const FieldSpec &f) {
  std::string out = low(f.bound.low);
  double max = f.bound.max;
  if (f.bound.low == FieldBound::Low::Fraction || !std::isfinite(max)) return out;
  int exp = 0;
  double ten = std::log10(max);
  std::string n = max >= 1024 && std::frexp(max, &exp) == 0.5 ? fmt::format("2^{}", exp - 1)
                  : max >= 1e6 && ten == std::round(ten)        ? fmt::format("10^{}", int(ten))
                                                                 : formatNumber(max);
  return out + ", <= " + n + (f.dim.isNumber() ? "" : " " + baseUnitName(f.dim));
}

std::string choices(std::span<const std::string_view> names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += fmt::format("{}`{}`", i == 0 ? "" : i + 1 == names.size() ? " or " : ", ", names[i]);
  return out;
}

/// The type column: what the language accepts for the field.
std::string typeOf(const FieldSpec &f) {
  switch (f.type) {
  case FieldType::Quantity: {
    std::string d = describeDim(f.dim);
    return (f.dim.isNumber() ? std::string("number") : d.substr(d.find(' ') + 1)) + bound(f);
  }
  case FieldType::Integer: return "whole number" + bound(f);
  case FieldType::Bool: return "`on` or `off`";
  case FieldType::Choice: return choices(f.choices);
  case FieldType::Ref: return fmt::format("a `{}`", nameOf(f.refKind));
  case FieldType::Distribution: return "`normal(m, sd)`, `uniform(lo, hi)` or a number";
  case FieldType::Name: return "a dimension name or `all`";
  case FieldType::Text: return "a quoted string";
  }
  return "";
}

std::string table(std::string_view name, std::span<const FieldSpec> rows) {
  std::string out = fmt::format("<!-- fields: {} -->\n| field | type | default | meaning |\n| --- | --- | --- | --- |\n",
                                name);
  for (const FieldSpec &f : rows) {
    std::string deflt = !f.deflt.empty() ? fmt::format("`{}`", f.deflt) : f.optional ? "none" : "required";
    out += fmt::format("| `{}` | {} | {} | {} |\n", f.path, typeOf(f), deflt, f.doc);
  }
  return out + "<!-- end fields -->\n";
}

/// The runtime's registry of building blocks: what `dim x : Kind(...)` takes.
std::string topologyKinds() {
  std::string out = "<!-- fields: topology kinds -->\n| building block | links |\n| --- | --- |\n";
  const char *extents[] = {"n", "a x b", "a x b x c"};
  for (const net::TopologyKind &k : net::topologyKinds())
    out += fmt::format("| `{}({})` | {} |\n", k.name, extents[std::min(k.extents, 3u) - 1], k.doc);
  return out + "<!-- end fields -->\n";
}

} // namespace

std::string fieldTablesMarkdown() {
  return table("gpu", SpecFields<GpuSpec>::rows()) + table("stack", SpecFields<StackSpec>::rows()) +
         table("model", SpecFields<ModelSpec>::rows()) +
         topologyKinds() + table("dim", SpecFields<DimensionSpec>::rows()) + table("soft fault", SpecFields<LinkFaultSpec>::rows()) +
         table("random fault", SpecFields<RandomFaultSpec>::rows()) +
         table("experiment", SpecFields<ExperimentRefs>::rows()) +
         table("training", SpecFields<TrainingSpec>::rows()) + table("inference", SpecFields<InferenceSpec>::rows()) +
         table("serving", SpecFields<ServingSpec>::rows()) + table("replay", SpecFields<ReplaySpec>::rows()) +
         table("parallel", SpecFields<ParallelSpec>::rows());
}

} // namespace rapid
