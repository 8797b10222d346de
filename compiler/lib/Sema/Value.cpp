//===- Value.cpp ----------------------------------------------------------===//
#include "rapid/Sema/Value.h"
#include "rapid/Support/Json.h"

#include <cmath>
#include <fmt/format.h>

namespace rapid {

bool Value::isInteger() const {
  return kind == Kind::Number && q.dim.isNumber() && std::floor(q.value) == q.value;
}

std::string Value::describe() const {
  switch (kind) {
  case Kind::Error: return "an invalid value";
  case Kind::Number: return describeDim(q.dim);
  case Kind::Bool: return "a switch (on/off)";
  case Kind::Symbol: return fmt::format("name '{}'", s);
  case Kind::String: return "a string";
  case Kind::List: return "a list";
  case Kind::Call: return fmt::format("'{}(...)'", s);
  }
  return "";
}

std::string Value::str() const {
  switch (kind) {
  case Kind::Error: return "<error>";
  case Kind::Number: return formatNumber(q.value);
  case Kind::Bool: return b ? "on" : "off";
  case Kind::Symbol: return s;
  case Kind::String: return fmt::format("\"{}\"", s);
  case Kind::List:
  case Kind::Call: {
    std::string out = kind == Kind::Call ? s + "(" : "[";
    for (size_t i = 0; i < items.size(); ++i)
      out += (i ? ", " : "") + items[i].str();
    return out + (kind == Kind::Call ? ")" : "]");
  }
  }
  return "";
}

void Value::writeJson(llvm::json::OStream &j) const {
  auto elements = [&] {
    for (const Value &v : items) v.writeJson(j);
  };
  switch (kind) {
  case Kind::Number: return writeNumber(j, q.value, JsonNumber::Stable);
  case Kind::Bool: return j.value(b);
  case Kind::List: return j.array(elements);
  case Kind::Call:
    return j.object([&] {
      j.attribute("dist", s);
      j.attributeArray("args", elements);
    });
  case Kind::Symbol:
  case Kind::String: return j.value(s);
  case Kind::Error: return j.value(nullptr);
  }
}

} // namespace rapid
