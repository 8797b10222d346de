//===- Requests.cpp - Where a serving run's requests come from ------------===//
//
// Drawn: Poisson arrivals at `rate` (exponential gaps; rate 0 sends all at
// once, as vLLM's benchmark does with an infinite request rate) and prompt
// and output lengths from their distributions, rounded and at least 1.
// Read: a trace of real arrivals and lengths (a CSV with a header, or JSONL
// objects), such as the Azure LLM inference traces or a benchmark's log
// turned into arrival_s, prompt, output.
//===----------------------------------------------------------------------===//
#include "rapid/Serve/Serve.h"

#include "rapid/Support/Files.h"
#include "rapid/Support/Random.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace rapid::serve {
namespace {

int64_t tokens(const Distribution &d, Random &rng) {
  double x = std::round(sample(d, rng));
  return int64_t(std::clamp(x, 1.0, limit::kTokens));
}

/// The columns a trace must give, and the names each may go by.
struct Column {
  const char *key;
  std::vector<llvm::StringRef> names;
};
const Column kColumns[] = {{"arrival_s", {"arrival_s", "arrival", "timestamp_s"}},
                           {"prompt", {"prompt", "prompt_tokens", "input_tokens", "ContextTokens"}},
                           {"output", {"output", "output_tokens", "GeneratedTokens"}}};

class TraceReader {
public:
  TraceReader(std::string path, int64_t limit) : path(std::move(path)), limit(limit) {}

  llvm::Expected<std::vector<Request>> read() {
    auto buf = llvm::MemoryBuffer::getFile(path);
    if (!buf) return fail(0, fmt::format("cannot read the trace: {}", buf.getError().message()));
    llvm::SmallVector<llvm::StringRef> lines;
    (*buf)->getBuffer().split(lines, '\n');
    std::vector<Request> out;
    bool jsonl = false, header = true;
    std::array<size_t, 3> col{};
    for (size_t n = 0; n < lines.size() && int64_t(out.size()) < limit; ++n) {
      llvm::StringRef line = lines[n].trim();
      if (line.empty()) continue;
      if (header) {
        header = false;
        jsonl = line.starts_with("{");
        if (!jsonl) {
          if (llvm::Error e = columns(line, n + 1, col)) return e;
          continue;
        }
      }
      llvm::Expected<Request> r = jsonl ? jsonRow(line, n + 1) : csvRow(line, n + 1, col);
      if (!r) return r.takeError();
      r->id = int64_t(out.size());
      if (!out.empty() && r->arrival < out.back().arrival)
        return fail(n + 1, fmt::format("arrival_s {} is earlier than the line before ({}): a trace is in arrival order",
                                       r->arrival, out.back().arrival));
      out.push_back(*r);
    }
    if (out.empty()) return fail(0, "the trace holds no requests");
    return out;
  }

private:
  llvm::Error fail(size_t line, const std::string &what) const {
    return fileError(line ? fmt::format("{}:{}", path, line) : path, what);
  }

  llvm::Error columns(llvm::StringRef line, size_t n, std::array<size_t, 3> &col) const {
    llvm::SmallVector<llvm::StringRef> cells;
    line.split(cells, ',');
    for (size_t c = 0; c < 3; ++c) {
      auto it = std::find_if(cells.begin(), cells.end(), [&](llvm::StringRef cell) {
        return llvm::is_contained(kColumns[c].names, cell.trim());
      });
      if (it == cells.end())
        return fail(n, fmt::format("expected a header naming {} (or {}), found '{}'", kColumns[c].key,
                                   llvm::join(kColumns[c].names.begin() + 1, kColumns[c].names.end(), ", "), line));
      col[c] = size_t(it - cells.begin());
    }
    return llvm::Error::success();
  }

  llvm::Expected<Request> csvRow(llvm::StringRef line, size_t n, const std::array<size_t, 3> &col) const {
    llvm::SmallVector<llvm::StringRef> cells;
    line.split(cells, ',');
    std::array<double, 3> v{};
    for (size_t c = 0; c < 3; ++c) {
      if (col[c] >= cells.size())
        return fail(n, fmt::format("expected {} columns, found {}", *std::max_element(col.begin(), col.end()) + 1,
                                   cells.size()));
      llvm::StringRef cell = cells[col[c]].trim();
      if (cell.getAsDouble(v[c]))
        return fail(n, fmt::format("expected a number for {}, found '{}'", kColumns[c].key, cell));
    }
    return checked(v, n);
  }

  llvm::Expected<Request> jsonRow(llvm::StringRef line, size_t n) const {
    llvm::Expected<llvm::json::Value> j = llvm::json::parse(line);
    if (!j) return fail(n, "expected a JSON object: " + llvm::toString(j.takeError()));
    const llvm::json::Object *o = j->getAsObject();
    if (!o) return fail(n, "expected a JSON object");
    std::array<double, 3> v{};
    for (size_t c = 0; c < 3; ++c) {
      std::optional<double> x;
      for (llvm::StringRef name : kColumns[c].names)
        if (!x) x = o->getNumber(name);
      if (!x) return fail(n, fmt::format("expected a number for \"{}\"", kColumns[c].key));
      v[c] = *x;
    }
    return checked(v, n);
  }

  llvm::Expected<Request> checked(const std::array<double, 3> &v, size_t n) const {
    if (!(v[0] >= 0) || !std::isfinite(v[0]))
      return fail(n, fmt::format("expected arrival_s >= 0, found {}", v[0]));
    for (size_t c = 1; c < 3; ++c)
      if (!(v[c] >= 1 && v[c] <= limit::kTokens) || v[c] != std::floor(v[c]))
        return fail(n, fmt::format("expected {} to be a whole number of tokens from 1 to {}, found {}", kColumns[c].key,
                                   int64_t(limit::kTokens), v[c]));
    return Request{0, v[0], int64_t(v[1]), int64_t(v[2])};
  }

  std::string path;
  int64_t limit;
};

} // namespace

llvm::Expected<std::vector<Request>> readTrace(const std::string &path, int64_t limit) {
  return TraceReader(path, limit).read();
}

/// Which shared prefix each request begins with: uniform, from a generator
/// of its own, so that one prefix leaves every other draw as it was.
static void drawPrefixes(const ServingSpec &s, std::vector<Request> &reqs) {
  if (s.prefixes <= 1) return;
  Random rng(uint64_t(s.seed) ^ 0x5052454649584553ull); // "PREFIXES"
  for (Request &r : reqs) r.prefix = std::min(s.prefixes - 1, int64_t(rng.uniform() * double(s.prefixes)));
}

llvm::Expected<std::vector<Request>> makeRequests(const ServingSpec &s) {
  if (!s.trace.empty()) {
    llvm::Expected<std::vector<Request>> reqs = readTrace(s.trace, s.requests);
    if (reqs) drawPrefixes(s, *reqs);
    return reqs;
  }
  Random rng(uint64_t(s.seed));
  std::vector<Request> out;
  double t = 0;
  for (int64_t i = 0; i < s.requests; ++i) {
    if (s.rate.value() > 0 && i > 0) t += rng.exponential(s.rate.value());
    Request r;
    r.id = i;
    r.arrival = t;
    r.prompt = tokens(s.prompt, rng);
    r.output = tokens(s.output, rng);
    out.push_back(r);
  }
  drawPrefixes(s, out);
  return out;
}

} // namespace rapid::serve
