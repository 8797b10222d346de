//===- Diagnostics.h - User-facing error reporting --------------*- C++ -*-===//
//
// The first tier of errors (design.md, convention 7): mistakes in the user's
// input. Every diagnostic has a row in DiagnosticKinds.def; this engine prints
// them as `file:line:col: error: message`, the source line and a caret, and
// counts errors so a stage can report all of them before the driver exits 1.
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/Support/SMLoc.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>
#include <set>
#include <string>
#include <vector>

namespace rapid {

enum class DiagID {
#define DIAG(Name, Severity, Format) Name,
#include "rapid/Support/DiagnosticKinds.def"
};

enum class Severity { Error, Warning, Note };

class DiagnosticEngine {
public:
  explicit DiagnosticEngine(llvm::SourceMgr &sm, llvm::raw_ostream &os = llvm::errs())
      : sm(sm), os(os) {}

  /// Reports `id` at `range` (which may be empty for command-line problems).
  template <class... Args>
  void report(DiagID id, llvm::SMRange range, const Args &...args) {
    emit(id, range, fmt::format(fmt::runtime(formatOf(id)), args...));
  }

  unsigned errorCount() const { return errors; }
  bool hasErrors() const { return errors != 0; }
  llvm::SourceMgr &sourceMgr() { return sm; }

  /// Program name printed before diagnostics that have no location.
  void setToolName(std::string name) { tool = std::move(name); }

private:
  static const char *formatOf(DiagID id);
  static Severity severityOf(DiagID id);
  void emit(DiagID id, llvm::SMRange range, const std::string &message);

  llvm::SourceMgr &sm;
  llvm::raw_ostream &os;
  std::string tool = "rapidc";
  unsigned errors = 0;
  /// Sweeps evaluate shared declarations once per point; say each thing once.
  std::set<std::pair<const char *, std::string>> said;
};

/// "; did you mean 'x'?" for the closest of `candidates` to `name`, or "".
template <class Range>
std::string didYouMean(std::string_view name, const Range &candidates);

std::string didYouMeanImpl(std::string_view name, const std::vector<std::string> &candidates);

template <class Range>
std::string didYouMean(std::string_view name, const Range &candidates) {
  std::vector<std::string> names;
  for (const auto &c : candidates)
    names.emplace_back(c);
  return didYouMeanImpl(name, names);
}

} // namespace rapid
