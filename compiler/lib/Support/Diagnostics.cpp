//===- Diagnostics.cpp ----------------------------------------------------===//
#include "rapid/Support/Diagnostics.h"

#include "llvm/ADT/StringRef.h"

namespace rapid {

const char *DiagnosticEngine::formatOf(DiagID id) {
  switch (id) {
#define DIAG(Name, Severity, Format)                                          \
  case DiagID::Name:                                                          \
    return Format;
#include "rapid/Support/DiagnosticKinds.def"
  }
  return "";
}

Severity DiagnosticEngine::severityOf(DiagID id) {
  switch (id) {
#define DIAG(Name, Sev, Format)                                               \
  case DiagID::Name:                                                          \
    return Severity::Sev;
#include "rapid/Support/DiagnosticKinds.def"
  }
  return Severity::Error;
}

void DiagnosticEngine::emit(DiagID id, llvm::SMRange range, const std::string &message) {
  Severity sev = severityOf(id);
  if (!said.insert({range.Start.getPointer(), message}).second)
    return;
  if (sev == Severity::Error)
    ++errors;
  auto kind = sev == Severity::Error     ? llvm::SourceMgr::DK_Error
              : sev == Severity::Warning ? llvm::SourceMgr::DK_Warning
                                         : llvm::SourceMgr::DK_Note;
  // One write per diagnostic where no colours are written: processes that
  // share a stderr (ranks under mpirun) cannot cut into its line.
  if (!range.Start.isValid()) {
    const char *label = sev == Severity::Error ? "error" : sev == Severity::Warning ? "warning" : "note";
    os << fmt::format("{}: {}: {}\n", tool, label, message);
    return;
  }
  // Only underline a range that stays on one line; carets are enough otherwise.
  llvm::SmallVector<llvm::SMRange, 1> ranges;
  if (range.End.isValid() && range.End.getPointer() > range.Start.getPointer() &&
      !llvm::StringRef(range.Start.getPointer(), range.End.getPointer() - range.Start.getPointer()).contains('\n'))
    ranges.push_back(range);
  if (os.has_colors())
    return sm.PrintMessage(os, range.Start, kind, message, ranges);
  std::string text;
  llvm::raw_string_ostream buf(text);
  sm.PrintMessage(buf, range.Start, kind, message, ranges);
  os << buf.str();
}

std::string didYouMeanImpl(std::string_view name, const std::vector<std::string> &candidates) {
  std::string best;
  unsigned bestDist = std::max<unsigned>(2, name.size() / 3) + 1;
  for (const std::string &c : candidates) {
    unsigned d = llvm::StringRef(c).edit_distance(name, true, bestDist);
    if (d < bestDist || (d == bestDist && !best.empty() && c < best && d < bestDist)) {
      bestDist = d;
      best = c;
    }
  }
  return best.empty() ? "" : fmt::format("; did you mean '{}'?", best);
}

} // namespace rapid
