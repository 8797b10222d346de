//===- Gemv.cpp - GEMMs with a unit side, run as GEMV kernels -------------===//
//
// docs/model.md §2.7. A matrix-vector product has no reuse for tensor cores
// to exploit: each element of the matrix is read once and used once. Its
// kernel is a stream of plain loads, and what limits it is how many bytes
// the resident threads keep in flight (Little's law), not math.
//===----------------------------------------------------------------------===//
#include "rapid/Cost/Gemm.h"
#include "GemmDetail.h"

#include <algorithm>

namespace rapid::cost {

bool runsAsGemv(const GemmShape &s) { return (s.m == 1 || s.n == 1) && !vectorAligned(s); }

namespace detail {

GemmCost gemvCost(const GpuSpec &g, const GemmShape &s) {
  double d = bytesOf(s.dtype);
  // The matrix is K x outputs; the vector is the unit side.
  int64_t outputs = std::max(s.m, s.n);
  int64_t ctas = ceilDiv(outputs, kGemvRowsPerCta) * s.batch;
  int64_t slots = g.smCount * (kMaxThreadsPerSm / kGemvThreads);
  int64_t resident = std::min(ctas, slots);
  // Every CTA streams its rows in rounds: each thread issues one 16-byte
  // load and the round ends when the last of them arrives, one latency plus
  // the time HBM takes to deliver all resident threads' loads. So the
  // kernel pays bytes/inFlight latencies and the bytes at the HBM rate:
  // latency-bound for few CTAs, bandwidth-bound for many.
  Bytes perCta(double(std::min(kGemvRowsPerCta, outputs) * s.k) * d);
  Bytes ctaInFlight(double(kGemvThreads) * kVectorBytes);
  double rounds = std::ceil(perCta / ctaInFlight) * double(ceilDiv(ctas, resident));
  Traffic bytes;
  double matrix = double(s.k * outputs) * d * double(s.batch);
  double vectors = double(s.k + outputs) * d * double(s.batch);
  bytes.hbm = Bytes(matrix + vectors);
  bytes.l2 = Bytes(matrix + double(ctas) * double(s.k) * d); // every CTA reads the whole vector
  Seconds waiting = g.hbmLatency * rounds, streaming = bytes.hbm / gemmHbmRate(g);
  Terms terms;
  (waiting > streaming ? terms.latency : terms.hbm) = waiting + streaming;
  Flops useful(2.0 * double(s.m) * double(s.n) * double(s.k) * double(s.batch));
  terms.compute = useful / mathRate(g, DType::FP32); // FMAs on the CUDA cores
  terms.l2 = bytes.l2 / l2Rate(g);
  GemmCost r;
  static_cast<KernelCost &>(r) = combine(g, terms, useful, bytes, 1);
  r.gemv = true;
  r.tile = CtaTile{kGemvRowsPerCta, 1, 0, 1, kGemvThreads / kWarpSize, 1};
  r.ctasPerSm = ceilDiv(resident, g.smCount);
  r.schedule = scheduleWaves(ctas, g.smCount, r.ctasPerSm);
  r.tiles = ctas;
  r.terms = terms;
  return r;
}

} // namespace detail
} // namespace rapid::cost
