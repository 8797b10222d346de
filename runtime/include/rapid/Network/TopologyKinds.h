//===- TopologyKinds.h - Every kind of network dimension -------*- C++ -*-===//
//
// The one list of dimension kinds. Each entry says how the kind is written
// (name, extent count, the check on the extents), how written extents become
// the axes the runtime uses (KingMesh(16) is a 4 x 4 grid), and how one line
// of the dimension is built and routed. Topology, Router and the config
// readers ask the entry instead of switching on DimKind, and the compiler asks
// it which building blocks exist, so adding a kind is adding one entry.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Network/Topology.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace rapid::net {

/// Receives one bidirectional link of the line being built.
using LinkAdder = llvm::function_ref<void(uint32_t a, uint32_t b, BytesPerSecond bw)>;

struct TopologyKind {
  DimKind kind;
  const char *name;  ///< as written in the language and in network JSON
  unsigned extents;  ///< how many the user writes: Torus2D(4 x 4) 2, Ring(8) 1
  bool switched;     ///< links go through switch nodes, not rank to rank
  const char *doc;   ///< one line for help texts and docs

  // Behaviour; the public functions below are what callers use.
  /// A kind-specific rule on well-formed extents ("" if met); may be null.
  std::string (*rule)(llvm::ArrayRef<int64_t> extents);
  /// Written extents -> axes; null when they are the same numbers.
  std::vector<int> (*toAxes)(llvm::ArrayRef<int64_t> extents);
  /// Switch nodes one line of the dimension owns; null for direct kinds.
  int (*switches)(const DimSpec &dim);
  /// Adds every link of one line.
  void (*build)(const DimLine &line, LinkAdder add);
  /// Appends the nodes after position `from` up to and including position
  /// `to` (both on `line`) on the kind's minimal fault-free path.
  void (*route)(const DimLine &line, int from, int to, std::vector<uint32_t> &nodes);

  /// What is wrong with these written extents ("a HyperCube needs a
  /// power-of-two size, not 6"), or "" if they describe a valid dimension.
  std::string checkExtents(llvm::ArrayRef<int64_t> extents) const;
  /// The axes (DimSpec::shape) of valid written extents.
  std::vector<int> axes(llvm::ArrayRef<int64_t> extents) const;
  /// The inverse of axes(): what the user wrote for a dimension of this shape.
  std::vector<int64_t> written(llvm::ArrayRef<int> shape) const;
  int switchesPerLine(const DimSpec &dim) const { return switches ? switches(dim) : 0; }
};

/// All kinds, in DimKind order.
llvm::ArrayRef<TopologyKind> topologyKinds();
const TopologyKind &topologyKind(DimKind kind);
/// The kind spelled exactly `name` (the language is case-sensitive), or null.
const TopologyKind *findTopologyKind(llvm::StringRef name);
/// "Ring, FullyConnected, ..., FatTree", for messages.
std::string topologyKindList();

/// Links (one direction each) that a dimension of `kind` and `size` ranks
/// builds in a network of `ranks`: what the readers' and the compiler's
/// limit counts (a FullyConnected dimension of n has n^2 per line).
double estimatedLinks(DimKind kind, double size, double ranks);
/// The same over every dimension of `spec`.
double estimatedLinks(const NetworkSpec &spec);
/// At most this many are built: 2^24 links take about 1.3 GB and 7 s to
/// build (FullyConnected(4096), measured), while 2^20 ranks with four ring
/// or switch dimensions stay under it.
constexpr double kMaxLinks = double(1 << 24);

const char *dimKindName(DimKind kind);
/// Parses "Ring", "torus2d", ... ignoring case, as Astra-Sim's files are
/// written; false if unknown.
bool parseDimKind(llvm::StringRef name, DimKind &out);

} // namespace rapid::net
