//===- Json.cpp -----------------------------------------------------------===//
#include "rapid/Support/Json.h"

#include "rapid/Support/Units.h"

#include <fmt/format.h>

namespace rapid {

std::string jsonNumberText(double v, JsonNumber form) {
  switch (form) {
  case JsonNumber::Shortest: return fmt::format("{}", v);
  case JsonNumber::Whole: return fmt::format("{:.0f}", v);
  case JsonNumber::Stable: return formatNumber(v);
  case JsonNumber::SixDigits: return fmt::format("{:.6g}", v);
  case JsonNumber::FourDecimals: return fmt::format("{:.4f}", v);
  }
  return fmt::format("{}", v);
}

void writeNumber(llvm::json::OStream &j, double v, JsonNumber form) { j.rawValue(jsonNumberText(v, form)); }

void writeNumber(llvm::json::OStream &j, llvm::StringRef key, double v, JsonNumber form) {
  j.attributeBegin(key);
  writeNumber(j, v, form);
  j.attributeEnd();
}

} // namespace rapid
