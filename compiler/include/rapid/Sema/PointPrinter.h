//===- PointPrinter.h - `--emit=sema` ---------------------------*- C++ -*-===//
#pragma once

#include "rapid/Sema/Sema.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace rapid {

/// One resolved point as indented `path = value` lines, values in base units.
void printPointText(const ExperimentPoint &p, llvm::raw_ostream &os);
/// One resolved point as a single JSON line (keys sorted, stable).
void printPointJson(const ExperimentPoint &p, llvm::raw_ostream &os);
/// `"point": {"tp": 4, ...}`: the swept values, in axis order, as one
/// attribute of the object `j` is writing (the --emit=sema line and results).
void writeSweptValues(llvm::json::OStream &j, const std::vector<std::pair<std::string, Value>> &point);
/// `tp=4 cp=2`: the swept values of a point.
std::string pointLabel(const ExperimentPoint &p);
/// `experiment 'e'` or `point tp=4 of sweep 's'`, as diagnostics name a point.
std::string pointName(const ExperimentPoint &p);

} // namespace rapid
