//===- Plots.cpp - SVG charts of a run's results --------------------------===//
//
// Two pictures a user would rather look at than read:
//  PREFIX.points.svg  one bar per point, its step time (or latency),
//                     relative to the best of its experiment or sweep, each
//                     group on its own scale; training bars stacked by rank
//                     0's breakdown; pruned points in grey with why.
//  PREFIX.faults.svg  per point and fault study, every sample's slowdown
//                     as a dot, the mean as a bar, against 1x (no faults).
//  PREFIX.serving.svg serving points: median and p99 end-to-end latency
//                     (log scale) against the requests per second served,
//                     one line per experiment or sweep: the throughput-
//                     latency curve of a sweep over the rate.
// Plain SVG written by hand: no dependency, same bytes for the same input.
//===----------------------------------------------------------------------===//
#include "rapid/Driver/Results.h"
#include "rapid/Support/Files.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

namespace rapid {
namespace {

constexpr double kLabelWidth = 330, kPlotWidth = 460, kRow = 22, kTop = 48;

std::string xml(llvm::StringRef s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

std::string header(double height, const std::string &title, const std::string &axis) {
  return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
                     "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
                     "<text x=\"10\" y=\"20\" font-size=\"15\" font-weight=\"bold\">{}</text>\n"
                     "<text x=\"{:.0f}\" y=\"38\" fill=\"#555\">{}</text>\n",
                     kLabelWidth + kPlotWidth + 170, height, xml(title), kLabelWidth, xml(axis));
}

/// Tick marks every 1, 2 or 5 x 10^k along [0, max].
std::string ticks(double lo, double hi, double bottom, const char *unit) {
  double raw = (hi - lo) / 5, mag = std::pow(10, std::floor(std::log10(raw)));
  double step = raw / mag < 2 ? mag : raw / mag < 5 ? 2 * mag : 5 * mag;
  std::string out;
  for (double v = std::ceil(lo / step) * step; v <= hi + 1e-12; v += step) {
    double x = kLabelWidth + (v - lo) / (hi - lo) * kPlotWidth;
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.0f}\" x2=\"{0:.1f}\" y2=\"{2:.0f}\" stroke=\"#ddd\"/>\n"
                       "<text x=\"{0:.1f}\" y=\"{3:.0f}\" text-anchor=\"middle\" fill=\"#555\">{4:g}{5}</text>\n",
                       x, kTop - 4, bottom, bottom + 14, v, unit);
  }
  return out;
}

std::string label(const PointResult &r) { return r.experiment + (r.label == "-" ? "" : " " + r.label); }

double headline(const PointResult &r) { return r.headline().value_or(0); }

/// The unit a workload's points are timed in.
const char *unitOf(Workload w) {
  switch (w) {
  case Workload::Training: return "seconds per step";
  case Workload::Inference: return "seconds per batch (TTFT and every decode step)";
  case Workload::Serving: return "mean seconds per request, end to end";
  case Workload::Replay: return "seconds per step (replayed profile)";
  case Workload::None: break;
  }
  return "seconds";
}

/// Rank 0's breakdown of a training step, as stacked segments.
struct Segment {
  double seconds;
  const char *color, *name;
};
std::vector<Segment> segments(const PointResult &r) {
  const PointResult::Training &t = *r.training;
  return {{t.computeTime, "#47a", "compute"},
          {t.exposedComm, "#e80", "exposed communication"},
          {t.bubble, "#a5c", "pipeline bubble"},
          {std::max(0.0, t.stepTime - t.computeTime - t.exposedComm - t.bubble), "#bbb", "idle"}};
}

std::string pointsChart(const std::vector<PointResult> &rows) {
  // One group per experiment or sweep, each on its own scale: training steps,
  // inference batches and served requests are not one quantity.
  std::vector<std::vector<const PointResult *>> groups;
  std::map<std::string, size_t> index;
  for (const PointResult &r : rows) {
    std::string key = (r.sweep.empty() ? r.experiment : "sweep " + r.sweep) + "\x1f" + std::string(nameOf(r.workload));
    auto [it, fresh] = index.try_emplace(key, groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(&r);
  }
  double bottom = kTop + kRow * double(rows.size() + groups.size()) + 6;
  std::string svg = header(bottom + 30, "Time per point", "each group on its own scale; training bars split into "
                                                          "rank 0's compute, exposed communication, bubble and idle");
  double y = kTop;
  for (const auto &group : groups) {
    const PointResult &first = *group.front();
    double best = INFINITY, worst = 0;
    for (const PointResult *o : group)
      if (headline(*o) > 0) best = std::min(best, headline(*o)), worst = std::max(worst, headline(*o));
    std::string title = first.sweep.empty() ? first.experiment : "sweep " + first.sweep;
    svg += fmt::format("<text x=\"10\" y=\"{:.0f}\" font-weight=\"bold\">{}: {}</text>\n", y + 15,
                       xml(title + " (" + std::string(nameOf(first.workload)) + ")"), xml(unitOf(first.workload)));
    y += kRow;
    for (const PointResult *o : group) {
      double t = headline(*o);
      svg += fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"end\">{}</text>\n", kLabelWidth - 8, y + 15,
                         xml(label(*o)));
      if (t <= 0) {
        svg += fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\" fill=\"#999\">{}: {}</text>\n", kLabelWidth + 4, y + 15,
                           o->error.empty() ? "pruned" : "failed", xml((o->error.empty() ? o->reason : o->error).substr(0, 70)));
        y += kRow;
        continue;
      }
      double scale = kPlotWidth / (worst * 1.05), x = kLabelWidth;
      if (o->training)
        for (const Segment &seg : segments(*o)) {
          svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.0f}\" width=\"{:.1f}\" height=\"{:.0f}\" fill=\"{}\">"
                             "<title>{}: {}</title></rect>\n",
                             x, y + 3, seg.seconds * scale, kRow - 6, seg.color, seg.name,
                             xml(formatSeconds(Seconds(seg.seconds))));
          x += seg.seconds * scale;
        }
      else
        svg += fmt::format("<rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"{:.1f}\" height=\"{:.0f}\" fill=\"{}\"/>\n",
                           kLabelWidth, y + 3, t * scale, kRow - 6, t == best ? "#2a7" : "#47a");
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\">{} ({:.2f}x the best)</text>\n", kLabelWidth + t * scale + 4,
                         y + 15, xml(formatSeconds(Seconds(t))), t / best);
      y += kRow;
    }
  }
  return svg + "</svg>\n";
}

std::string faultsChart(const std::vector<PointResult> &rows) {
  struct Row {
    std::string name;
    double base;
    std::vector<double> slow;
  };
  std::vector<Row> studies;
  double hi = 1.1;
  for (const PointResult &o : rows)
    for (const FaultStudy &f : o.faultStudies) {
      Row r{label(o) + ": " + f.name, f.baseline, {}};
      for (double t : f.times) r.slow.push_back(t / r.base);
      for (double s : r.slow) hi = std::max(hi, s * 1.05);
      studies.push_back(std::move(r));
    }
  double bottom = kTop + kRow * double(studies.size()) + 6;
  std::string svg = header(bottom + 30, "Fault sensitivity", "slowdown against the run without random faults");
  svg += ticks(1, hi, bottom, "x");
  auto x = [&](double s) { return kLabelWidth + (s - 1) / (hi - 1) * kPlotWidth; };
  for (size_t i = 0; i < studies.size(); ++i) {
    const Row &r = studies[i];
    double y = kTop + kRow * double(i), mean = 0;
    for (double s : r.slow) mean += s / double(r.slow.size());
    svg += fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"end\">{}</text>\n", kLabelWidth - 8, y + 15,
                       xml(r.name));
    svg += fmt::format("<rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"{:.1f}\" height=\"{:.0f}\" fill=\"#cde\"/>\n", kLabelWidth,
                       y + 5, x(mean) - kLabelWidth, kRow - 10);
    for (double s : r.slow)
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.0f}\" r=\"2.5\" fill=\"#c33\" fill-opacity=\"0.5\"/>\n", x(s),
                         y + kRow / 2);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.0f}\">mean {:.3f}x</text>\n", kLabelWidth + kPlotWidth + 6, y + 15, mean);
  }
  return svg + "</svg>\n";
}

std::string servingChart(const std::vector<PointResult> &rows) {
  constexpr double left = 80, width = 560, top = 60, height = 320;
  std::map<std::string, std::vector<const PointResult *>> lines; // by experiment and sweep
  double xMax = 0, yMin = INFINITY, yMax = 0;
  for (const PointResult &r : rows)
    if (r.serving) {
      lines[r.experiment + (r.sweep.empty() ? "" : " / " + r.sweep)].push_back(&r);
      xMax = std::max(xMax, r.serving->requestsPerSecond);
      yMin = std::min(yMin, r.serving->e2e.p50), yMax = std::max(yMax, r.serving->e2e.p99);
    }
  double lo = std::floor(std::log10(std::max(yMin, 1e-6))), hi = std::ceil(std::log10(std::max(yMax, 1e-6)));
  if (hi <= lo) hi = lo + 1;
  xMax *= 1.05;
  auto X = [&](double v) { return left + v / xMax * width; };
  auto Y = [&](double s) { return top + height - (std::log10(std::max(s, 1e-9)) - lo) / (hi - lo) * height; };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" font-family=\"sans-serif\" "
      "font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"10\" y=\"20\" font-size=\"15\" font-weight=\"bold\">Latency against throughput</text>\n"
      "<text x=\"{:.0f}\" y=\"40\" fill=\"#555\">end-to-end latency per request, median (solid) and p99 "
      "(dashed), against requests per second served</text>\n",
      left + width + 260, top + height + 50, left);
  for (double e = lo; e <= hi; ++e)
    svg += fmt::format("<line x1=\"{0:.0f}\" y1=\"{1:.1f}\" x2=\"{2:.0f}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>\n"
                       "<text x=\"{3:.0f}\" y=\"{4:.1f}\" text-anchor=\"end\" fill=\"#555\">{5}</text>\n",
                       left, Y(std::pow(10, e)), left + width, left - 6, Y(std::pow(10, e)) + 4,
                       xml(formatSeconds(Seconds(std::pow(10, e)))));
  double raw = xMax / 5, mag = std::pow(10, std::floor(std::log10(raw)));
  double step = raw / mag < 2 ? mag : raw / mag < 5 ? 2 * mag : 5 * mag;
  for (double v = 0; v <= xMax + 1e-12; v += step)
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.0f}\" x2=\"{0:.1f}\" y2=\"{2:.0f}\" stroke=\"#ddd\"/>\n"
                       "<text x=\"{0:.1f}\" y=\"{3:.0f}\" text-anchor=\"middle\" fill=\"#555\">{4:g} req/s</text>\n",
                       X(v), top, top + height, top + height + 16, v);
  static const char *const colors[] = {"#47a", "#c33", "#2a7", "#a5c", "#e80", "#088"};
  size_t n = 0;
  for (auto &[name, points] : lines) {
    const char *c = colors[n % 6];
    std::stable_sort(points.begin(), points.end(), [](const PointResult *a, const PointResult *b) {
      return a->serving->requestsPerSecond < b->serving->requestsPerSecond;
    });
    for (bool tail : {false, true}) {
      std::string path;
      for (const PointResult *r : points) {
        double x = X(r->serving->requestsPerSecond), y = Y(tail ? r->serving->e2e.p99 : r->serving->e2e.p50);
        path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "" : " ", x, y);
        svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{}</title></circle>\n", x,
                           y, tail ? "white\" stroke=\"" + std::string(c) : c, xml(label(*r)));
      }
      svg += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\"{}/>\n", path, c,
                         tail ? " stroke-dasharray=\"4 3\"" : "");
    }
    svg += fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\" fill=\"{}\">{}</text>\n", left + width + 12,
                       top + 14 + 18 * double(n), c, xml(name));
    ++n;
  }
  return svg + "</svg>\n";
}

} // namespace

llvm::Error writePlots(const std::string &prefix, const std::vector<PointResult> &results) {
  if (llvm::Error e = writeFile(prefix + ".points.svg", pointsChart(results))) return e;
  bool faults = std::any_of(results.begin(), results.end(), [](const PointResult &r) { return !r.faultStudies.empty(); });
  if (faults)
    if (llvm::Error e = writeFile(prefix + ".faults.svg", faultsChart(results))) return e;
  bool serving = std::any_of(results.begin(), results.end(), [](const PointResult &r) { return r.serving.has_value(); });
  if (serving) return writeFile(prefix + ".serving.svg", servingChart(results));
  return llvm::Error::success();
}

} // namespace rapid
