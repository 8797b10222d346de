//===- Verifier.h - IR invariants, checked between passes ------*- C++ -*-===//
#pragma once

#include "rapid/IR/IR.h"

#include <string>

namespace rapid::ir {

/// Checks that deps point backwards (program order is topological), that
/// compute ops have non-negative work and a finite time, that GEMMs and
/// attention have every dimension (m, n, k, batch) above zero, that
/// collectives name a group and a size, and that every send has a matching
/// recv on its peer stage.
/// Returns "" or a description of the first violation; a violation is a
/// bug in rapid, not in the user's input.
std::string verify(const Program &p);

} // namespace rapid::ir
