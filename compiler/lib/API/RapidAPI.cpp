//===- RapidAPI.cpp - rapid as a library (include/rapid/API/rapid.h) ------===//
//
// The run rapidc does without its command line: Sema with the overrides,
// every point through runSweep, each result as its JSON line. Source text is
// analyzed from a file written beside the name it is given, so imports and
// diagnostics read as they would for a file on disk.
//===----------------------------------------------------------------------===//
#include "rapid/API/rapid.h"

#include "rapid/Driver/Sweep.h"
#include "rapid/Sema/Sema.h"
#include "rapid/Support/Files.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/Threading.h"

#include <cstdlib>
#include <cstring>

namespace {

char *copy(const std::string &s) {
  char *out = static_cast<char *>(std::malloc(s.size() + 1));
  if (out) std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

/// Writes `source` to a fresh file in `name`'s folder, removed when done.
struct SourceFile {
  std::string path;
  llvm::Error write(const std::string &name, const char *source) {
    llvm::SmallString<256> dir(llvm::sys::path::parent_path(name));
    if (dir.empty()) dir = ".";
    llvm::SmallString<256> model(dir);
    llvm::sys::path::append(model, ".rapid-api-%%%%%%.rapid");
    int fd;
    llvm::SmallString<256> out;
    if (std::error_code ec = llvm::sys::fs::createUniqueFile(model, fd, out))
      return llvm::createStringError(ec, "cannot write the source beside '%s': %s", name.c_str(),
                                     ec.message().c_str());
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << source;
    path = std::string(out);
    return llvm::Error::success();
  }
  ~SourceFile() {
    if (!path.empty()) llvm::sys::fs::remove(path);
  }
};

} // namespace

extern "C" const char *rapid_version(void) { return RAPID_VERSION; }

extern "C" void rapid_free(char *text) { std::free(text); }

extern "C" char *rapid_run(const char *file, const char *source, const char *const *overrides, size_t n_overrides,
                           const char *stdlib, unsigned jobs, char **diagnostics, int *status) {
  using namespace rapid;
  std::string report;
  llvm::raw_string_ostream errs(report);
  llvm::SourceMgr sm;
  DiagnosticEngine diags(sm, errs);
  SourceFile written;
  std::string shownAs = file ? file : "<source>.rapid";
  auto finish = [&](char *out, int code) {
    // Source text is reported under the name it was given, not the file it was written to.
    for (size_t at; !written.path.empty() && (at = report.find(written.path)) != std::string::npos;)
      report.replace(at, written.path.size(), shownAs);
    if (diagnostics) *diagnostics = copy(report);
    if (status) *status = code;
    return out;
  };
  SemaOptions opts;
  opts.stdlibDir = stdlib ? stdlib : RAPID_STDLIB_DIR;
  for (size_t i = 0; i < n_overrides; ++i) opts.overrides.push_back(overrides[i]);
  std::string path = file ? file : "";
  if (source) {
    if (llvm::Error e = written.write(shownAs, source)) {
      errs << "error: " << llvm::toString(std::move(e)) << "\n";
      return finish(nullptr, 1);
    }
    path = written.path;
  }
  if (path.empty()) {
    errs << "error: rapid_run needs a file or source text\n";
    return finish(nullptr, 1);
  }
  std::optional<Program> prog = analyze(path, opts, diags);
  if (!prog) return finish(nullptr, 1);
  SweepOptions so;
  so.jobs = jobs ? jobs : llvm::hardware_concurrency().compute_thread_count();
  so.diags = &diags;
  llvm::Expected<std::vector<PointResult>> results = runSweep(prog->points, so);
  if (!results) {
    errs << "error: " << llvm::toString(results.takeError()) << "\n";
    return finish(nullptr, 1);
  }
  std::string lines;
  for (const PointResult &r : *results) lines += resultJson(r) + "\n";
  reportOutcomes(prog->points, *results, diags); // what makes rapidc exit 1
  return finish(copy(lines), diags.hasErrors() ? 1 : 0);
}
