//===- Parallel.h - Independent tasks on LLVM's thread pool -----*- C++ -*-===//
//
// Sweeps run points, fault studies run samples: tasks that share nothing
// but their output slots. Both go through parallelFor, so both print the
// same bytes at any -j and report the same error.
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <cstddef>

namespace rapid {

/// Threads for `tasks` tasks when `requested` were asked for: at least one,
/// at most one per task and four per hardware thread (so `-j 100000` runs
/// instead of failing to start 100000 threads).
unsigned clampJobs(unsigned requested, size_t tasks);

/// Runs task(i) for every i in [0, n) on clampJobs(jobs, n) threads of
/// LLVM's thread pool (on the calling thread alone when that is one). Each
/// task writes its own slot, so results come out in index order whatever
/// the schedule. Every task runs even when one fails (a sweep's journal
/// keeps what finished); the error returned is the lowest failing index's,
/// whichever failed first.
llvm::Error parallelFor(size_t n, unsigned jobs, llvm::function_ref<llvm::Error(size_t)> task);

} // namespace rapid
