//===- Value.h - What .rapid expressions evaluate to -----------*- C++ -*-===//
#pragma once

#include "rapid/Support/Units.h"

#include "llvm/Support/SMLoc.h"

#include <string>
#include <vector>

namespace llvm::json {
class OStream;
}

namespace rapid {

/// A value of the language. Numbers carry a dimension (Quantity); names that
/// are not fields stay symbols (`bf16`, `a100_sxm_80gb`) until a schema gives
/// them meaning; calls such as `normal(0.5, 0.1)` stay calls (distributions).
struct Value {
  enum class Kind { Error, Number, Bool, Symbol, String, List, Call };
  Kind kind = Kind::Error;
  Quantity q;
  bool b = false;
  std::string s;             ///< symbol, string, or callee of a call
  std::vector<Value> items;  ///< list elements, or a call's arguments
  llvm::SMRange range;       ///< where it was written

  static Value error() { return {}; }
  static Value number(double v, Dim d = Dim::number(), llvm::SMRange r = {}) {
    Value x; x.kind = Kind::Number; x.q = {v, d}; x.range = r; return x;
  }
  static Value boolean(bool v, llvm::SMRange r = {}) {
    Value x; x.kind = Kind::Bool; x.b = v; x.range = r; return x;
  }
  static Value symbol(std::string name, llvm::SMRange r = {}) {
    Value x; x.kind = Kind::Symbol; x.s = std::move(name); x.range = r; return x;
  }
  bool isError() const { return kind == Kind::Error; }
  bool isNumber() const { return kind == Kind::Number; }
  double num() const { return q.value; }
  bool isInteger() const;

  /// For messages: "a size (B)", "name 'bf16'", "a list".
  std::string describe() const;
  /// Stable text in base units: `8.192e+03`-free, e.g. `80000000000`, `on`.
  std::string str() const;
  /// The same as the next JSON value of `j`; calls are {"dist":..,"args":[..]}.
  void writeJson(llvm::json::OStream &j) const;
};

} // namespace rapid
