//===- Field.h - What a field of the language is ---------------*- C++ -*-===//
//
// Every field a declaration accepts is one row of a `.def` table in this
// folder (GpuFields.def, ModelFields.def, ...). A row names the member of a
// typed spec struct, the field's dotted path in the language, its C++ type,
// its default (as .rapid source), its bound and a line of documentation.
// The C++ type decides how the language checks the value: `Bytes` is a size,
// `int64_t` a whole number, an enum one of its names, `Ref<K>` a declaration.
// FieldTraits turns the type into the schema row Sema checks against, so a
// field is spelled once and the struct, the schema and docs/language.md's
// tables cannot drift apart.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Spec/Enums.h"
#include "rapid/Support/Random.h"
#include "rapid/Support/Units.h"

#include <array>
#include <limits>
#include <type_traits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rapid {

enum class FieldType {
  Quantity,     ///< a number with the dimension `dim`
  Integer,      ///< a whole plain number
  Bool,         ///< on/off, true/false
  Choice,       ///< one of `choices`
  Ref,          ///< a declaration of kind `refKind`
  Distribution, ///< normal(m, sd), uniform(lo, hi), constant(v)
  Name,         ///< a name checked elsewhere (a dimension of the network)
  Text,         ///< a quoted string (a file name)
};

/// A number field's range: a lower side and an inclusive upper limit (in
/// base units). Rows write `Positive(limit::kRanks)`, `NonNegative(3)`,
/// `Fraction` or `Any` (for fields that are not numbers).
struct FieldBound {
  enum class Low : uint8_t { Any, Positive, NonNegative, Fraction, AtLeastOne };
  Low low = Low::Any;
  double max = std::numeric_limits<double>::infinity();

  static constexpr FieldBound Positive(double max) { return {Low::Positive, max}; }
  static constexpr FieldBound NonNegative(double max) { return {Low::NonNegative, max}; }
  static constexpr FieldBound AtLeastOne(double max) { return {Low::AtLeastOne, max}; }
  static const FieldBound Any, Fraction;
  friend constexpr bool operator==(const FieldBound &, const FieldBound &) = default;
};
inline constexpr FieldBound FieldBound::Any{};
inline constexpr FieldBound FieldBound::Fraction{Low::Fraction, 1};

/// The upper limits of the field tables. Each is far beyond any cluster or
/// model built or planned (today's largest: ~100k GPUs, ~130 layers, hidden
/// 16k-32k, 10M-token contexts, ~1 ms latencies), yet small enough that
/// what the compiler multiplies (tokens x widths, ranks x ranks, layers x
/// microbatches) stays far inside int64 and what it loops over (layers,
/// ranks, samples) stays short. Sema checks each field against its limit
/// with a location; Checks.cpp bounds the products (ranks in all,
/// microbatches per step, tokens per microbatch).
namespace limit {
inline constexpr double kRanks = 1 << 20;    ///< GPUs, parallel degrees, extents: 10x the largest clusters
inline constexpr double kLayers = 1 << 14;   ///< layers are lowered one by one
inline constexpr double kWidth = 1 << 22;    ///< hidden, ffn, head_dim: 100x today's widest
inline constexpr double kHeads = 1 << 16;    ///< attention heads, experts
inline constexpr double kVocab = 1 << 24;    ///< 64x today's largest vocabularies
inline constexpr double kTokens = 1 << 24;   ///< a sequence: 16M tokens, above the longest contexts
inline constexpr double kSequences = 1 << 24; ///< sequences in a batch
inline constexpr double kSamples = 1 << 14;  ///< Monte Carlo and decode samples: each is simulated
inline constexpr double kBytes = 0x1p60;     ///< sizes: 1 EiB
inline constexpr double kPacket = 0x1p20;    ///< 1 MiB: over 100x a 9000 B jumbo frame, 16x an IP datagram
inline constexpr double kBandwidth = 1e18;   ///< 1 EB/s: a million times an NVLink 5 port
inline constexpr double kFlops = 1e21;       ///< 1 ZFLOP/s on one GPU: 10^5 x a B200
inline constexpr double kClock = 1e12;       ///< 1 THz
inline constexpr double kSmCount = 1 << 16;
inline constexpr double kLatency = 1;        ///< 1 s: hops and launches take microseconds
inline constexpr double kFactor = 1000;      ///< ratios: calibrations, capacity factor, oversubscription
inline constexpr double kSeed = 0x1p53;
inline constexpr double kRequests = 1 << 24; ///< a serving run: each request is scheduled, step by step
inline constexpr double kRate = 1e9;         ///< requests per second: a million times the busiest engines
inline constexpr double kDraftTokens = 64;  ///< speculative tokens a step: each is a sequential draft pass
inline constexpr double kSloSeconds = 86400; ///< a latency target: a day      ///< every integer up to 2^53 is exact in a double
} // namespace limit

/// A declaration that a field refers to by name: `model = llama3_70b;`.
template <DeclKind K> struct Ref {
  static constexpr DeclKind kind = K;
  std::string name;
  bool empty() const { return name.empty(); }
  friend bool operator==(const Ref &, const Ref &) = default;
};

/// A name of something checked outside the field table (a dimension).
struct DimName {
  std::string name;
  friend bool operator==(const DimName &, const DimName &) = default;
};

/// A random draw: `normal(mean, sd)`, `uniform(lo, hi)` or `constant(v)`.
struct Distribution {
  enum class Kind : uint8_t { Constant, Normal, Uniform };
  Kind kind = Kind::Constant;
  double a = 0, b = 0; ///< mean and sd, lo and hi, or the constant (a)
  friend bool operator==(const Distribution &, const Distribution &) = default;
};
std::string_view nameOf(Distribution::Kind k);
/// One draw from `d` (unclamped).
inline double sample(const Distribution &d, Random &rng) {
  switch (d.kind) {
  case Distribution::Kind::Normal: return d.a + d.b * rng.normal();
  case Distribution::Kind::Uniform: return d.a + (d.b - d.a) * rng.uniform();
  case Distribution::Kind::Constant: break;
  }
  return d.a;
}

/// How a C++ member type is checked in the language.
template <class T> struct FieldTraits;
template <> struct FieldTraits<int64_t> {
  static constexpr FieldType type = FieldType::Integer;
  static constexpr Dim dim = Dim::number();
};
template <> struct FieldTraits<double> { ///< a plain number, percentages included
  static constexpr FieldType type = FieldType::Quantity;
  static constexpr Dim dim = Dim::number();
};
template <> struct FieldTraits<bool> {
  static constexpr FieldType type = FieldType::Bool;
  static constexpr Dim dim = Dim::number();
};
template <class Tag> struct FieldTraits<Unit<Tag>> {
  static constexpr FieldType type = FieldType::Quantity;
  static constexpr Dim dim = dimOf<Unit<Tag>>();
};
template <class E>
  requires std::is_enum_v<E>
struct FieldTraits<E> {
  static constexpr FieldType type = FieldType::Choice;
  static constexpr Dim dim = Dim::number();
};
template <DeclKind K> struct FieldTraits<Ref<K>> {
  static constexpr FieldType type = FieldType::Ref;
  static constexpr Dim dim = Dim::number();
};
template <> struct FieldTraits<Distribution> {
  static constexpr FieldType type = FieldType::Distribution;
  static constexpr Dim dim = Dim::number();
};
template <> struct FieldTraits<DimName> {
  static constexpr FieldType type = FieldType::Name;
  static constexpr Dim dim = Dim::number();
};

template <> struct FieldTraits<std::string> {
  static constexpr FieldType type = FieldType::Text;
  static constexpr Dim dim = Dim::number();
};

/// One row of a field table, as Sema and the docs see it.
struct FieldSpec {
  std::string_view path;
  FieldType type;
  Dim dim;                 ///< for Quantity
  std::string_view deflt;  ///< default expression; "" means required
  std::span<const std::string_view> choices; ///< for Choice
  DeclKind refKind = DeclKind::Gpu;          ///< for Ref
  FieldBound bound = FieldBound::Any;
  std::string_view doc;
  /// Only present when this top-level section is written (training/inference).
  std::string_view group = {};
  bool optional = false; ///< may stay unset (no default, not required)

  bool isChoice(std::string_view name) const;
};

template <class T> constexpr FieldSpec fieldRow(std::string_view path, std::string_view deflt, FieldBound bound,
                                                std::string_view doc, std::string_view group, bool optional) {
  FieldSpec f{path, FieldTraits<T>::type, FieldTraits<T>::dim, deflt, {}, DeclKind::Gpu, bound, doc, group, optional};
  if constexpr (std::is_enum_v<T>) f.choices = enumNames<T>();
  if constexpr (FieldTraits<T>::type == FieldType::Ref) f.refKind = T::kind;
  return f;
}

/// One declaration kind (`gpu`, `model`, ...) or a nested entity (`dim`).
struct KindSchema {
  std::string_view kind;
  std::string_view noun; ///< for messages: "GPU", "model"
  std::span<const FieldSpec> fields;

  const FieldSpec *find(std::string_view path) const;
  /// Paths whose last components equal `name` ("tp" -> "parallel.tp").
  std::vector<const FieldSpec *> bySuffix(std::string_view name) const;
  bool hasSection(std::string_view prefix) const;
};

} // namespace rapid
