//===- Units.h - Physical quantities with units ----------------*- C++ -*-===//
//
// Two layers. `Quantity` is the dynamic value the language computes with: a
// double in base units (bytes, seconds, FLOPs) and the exponents of those base
// units, so `100 GB/s` is 1e11 with dimension B^1 s^-1. The strong types below
// (`Bytes`, `Seconds`, ...) are what later stages use; `Quantity` is converted
// into them once, at the Sema boundary.
//
// Conventions the language states (docs/language.md): KB/MB/GB/TB are powers
// of 10, KiB/MiB/GiB/TiB powers of 2; bits (b, Kb, Mb, Gb, Tb) are 1/8 byte,
// powers of 10, as network link rates are quoted.
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rapid {

/// Exponents of the base units byte, second and FLOP.
struct Dim {
  int8_t bytes = 0, seconds = 0, flops = 0;
  friend bool operator==(Dim, Dim) = default;
  Dim operator*(Dim o) const {
    return {int8_t(bytes + o.bytes), int8_t(seconds + o.seconds), int8_t(flops + o.flops)};
  }
  Dim operator/(Dim o) const {
    return {int8_t(bytes - o.bytes), int8_t(seconds - o.seconds), int8_t(flops - o.flops)};
  }
  bool isNumber() const { return *this == Dim{}; }

  static constexpr Dim number() { return {}; }
  static constexpr Dim size() { return {1, 0, 0}; }
  static constexpr Dim time() { return {0, 1, 0}; }
  static constexpr Dim frequency() { return {0, -1, 0}; }
  static constexpr Dim bandwidth() { return {1, -1, 0}; }
  static constexpr Dim work() { return {0, 0, 1}; }
  static constexpr Dim compute() { return {0, -1, 1}; }
};

/// "a bandwidth (B/s)", "a size (B)", ...: how diagnostics name a dimension.
std::string describeDim(Dim d);
/// The base-unit spelling of a dimension: "B/s", "FLOP/s", "s", "B*s".
std::string baseUnitName(Dim d);

/// A unit spelling the language accepts.
struct UnitInfo {
  double scale; ///< base units per one of this unit
  Dim dim;
  double mul = 1, div = 1; ///< scale = mul / div, kept apart for exactness
  /// `v` of this unit in base units; `5 us` gives exactly the double 5e-6.
  double toBase(double v) const { return v * mul / div; }
};
/// Looks up a unit spelling such as "GiB", "Gb/s", "TFLOP/s", "us", "%".
std::optional<UnitInfo> lookupUnit(std::string_view spelling);
/// A unit that the user may have meant when `spelling` has the wrong
/// dimension for `expected` ("GB" for a bandwidth -> "GB/s"), or "".
std::string suggestUnit(std::string_view spelling, Dim expected);
/// The closest known unit spelling to a misspelled one, or "".
std::string closestUnit(std::string_view spelling);
/// What a misspelled unit most likely meant, best first: the rate of a
/// network-style spelling (Gbps: Gb/s), every unit the same letters spell in
/// another case (gb/s: GB/s and Gb/s), else closestUnit's; empty for none.
std::vector<std::string> closestUnits(std::string_view spelling);

/// A number with a dimension, in base units.
struct Quantity {
  double value = 0;
  Dim dim;
};

//===----------------------------------------------------------------------===//
// Strong types for the rest of the compiler and the runtime.
//===----------------------------------------------------------------------===//

template <class Tag> struct Unit {
  double v = 0;
  constexpr Unit() = default;
  constexpr explicit Unit(double value) : v(value) {}
  constexpr double value() const { return v; }
  constexpr Unit operator+(Unit o) const { return Unit(v + o.v); }
  constexpr Unit operator-(Unit o) const { return Unit(v - o.v); }
  constexpr Unit operator*(double k) const { return Unit(v * k); }
  constexpr Unit operator/(double k) const { return Unit(v / k); }
  constexpr double operator/(Unit o) const { return v / o.v; }
  constexpr Unit &operator+=(Unit o) { v += o.v; return *this; }
  constexpr auto operator<=>(const Unit &) const = default;
};

struct BytesTag;
struct SecondsTag;
struct FlopsTag;
struct BytesPerSecondTag;
struct FlopsPerSecondTag;
struct HertzTag;
using Bytes = Unit<BytesTag>;
using Seconds = Unit<SecondsTag>;
using Flops = Unit<FlopsTag>;
using BytesPerSecond = Unit<BytesPerSecondTag>;
using FlopsPerSecond = Unit<FlopsPerSecondTag>;
using Hertz = Unit<HertzTag>;

constexpr Seconds operator/(Bytes b, BytesPerSecond bw) { return Seconds(b.v / bw.v); }
constexpr Seconds operator/(Flops f, FlopsPerSecond r) { return Seconds(f.v / r.v); }
constexpr Bytes operator*(BytesPerSecond bw, Seconds t) { return Bytes(bw.v * t.v); }
constexpr Flops operator*(FlopsPerSecond r, Seconds t) { return Flops(r.v * t.v); }

/// Shortest text that reads back to the same double (integers without ".0"),
/// after rounding to 15 significant digits so that `1.1 * 1e15` prints as
/// 1100000000000000; the form written to JSON by the compiler and runtime.
std::string formatNumber(double v);

/// Human-readable forms for reports: "80 GiB", "1.25 ms", "100 GB/s".
std::string formatBytes(Bytes b);
std::string formatSeconds(Seconds s);
std::string formatBandwidth(BytesPerSecond bw);

/// The dimension a strong type stands for, for checking at the boundary.
template <class T> constexpr Dim dimOf();
template <> constexpr Dim dimOf<Bytes>() { return Dim::size(); }
template <> constexpr Dim dimOf<Seconds>() { return Dim::time(); }
template <> constexpr Dim dimOf<Flops>() { return Dim::work(); }
template <> constexpr Dim dimOf<BytesPerSecond>() { return Dim::bandwidth(); }
template <> constexpr Dim dimOf<FlopsPerSecond>() { return Dim::compute(); }
template <> constexpr Dim dimOf<Hertz>() { return Dim::frequency(); }

} // namespace rapid
