//===- PointPrinter.h - `--emit=sema` ---------------------------*- C++ -*-===//
#pragma once

#include "rapid/Sema/Sema.h"

#include "llvm/Support/raw_ostream.h"

namespace rapid {

/// One resolved point as indented `path = value` lines, values in base units.
void printPointText(const ExperimentPoint &p, llvm::raw_ostream &os);
/// One resolved point as a single JSON line (keys sorted, stable).
void printPointJson(const ExperimentPoint &p, llvm::raw_ostream &os);
/// `tp=4 cp=2`: the swept values of a point.
std::string pointLabel(const ExperimentPoint &p);

} // namespace rapid
