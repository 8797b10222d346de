//===- Json.h - Numbers in rapid's JSON -------------------------*- C++ -*-===//
//
// Every JSON object rapid prints is written through llvm::json::OStream,
// which escapes strings and balances brackets. Numbers need one more step:
// a json::Value prints a double with 17 significant digits (0.1 becomes
// 0.10000000000000001), while rapid's outputs have always printed the
// shortest text that reads back as the same double. Writers pass numbers
// through these instead, so each form is spelled in one place.
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/Support/JSON.h"

#include <string>

namespace rapid {

/// How a number is spelled.
enum class JsonNumber {
  Shortest,     ///< the shortest text that reads back as the same double: 0.25, 1e-05, 4
  Whole,        ///< rounded to an integer, never an exponent: byte counts
  Stable,       ///< formatNumber (Units.h), 15 significant digits: resolved values
  SixDigits,    ///< six significant digits: kernel cost answers
  FourDecimals, ///< four decimals: GEMM waves
};

/// `v` spelled in `form`.
std::string jsonNumberText(double v, JsonNumber form = JsonNumber::Shortest);

/// `v` as the next value of `j`.
void writeNumber(llvm::json::OStream &j, double v, JsonNumber form = JsonNumber::Shortest);

/// `"key":v` in the object `j` is writing.
void writeNumber(llvm::json::OStream &j, llvm::StringRef key, double v, JsonNumber form = JsonNumber::Shortest);

} // namespace rapid
