//===- Parallel.cpp -------------------------------------------------------===//
#include "rapid/Driver/Parallel.h"

#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"

#include <algorithm>
#include <exception>
#include <mutex>

namespace rapid {

unsigned clampJobs(unsigned requested, size_t tasks) {
  size_t hardware = std::max(1u, llvm::hardware_concurrency().compute_thread_count());
  return unsigned(std::max<size_t>(1, std::min({size_t(requested), 4 * hardware, tasks})));
}

/// `task(i)`, with an exception (a bug: nothing in rapid throws on bad
/// input) turned into an error. A thread pool's task would otherwise lose
/// it, and the point would come out with no result and no message.
static llvm::Error guarded(llvm::function_ref<llvm::Error(size_t)> task, size_t i) {
  try {
    return task(i);
  } catch (const std::exception &ex) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error (a bug in rapid, please report it): %s", ex.what());
  }
}

llvm::Error parallelFor(size_t n, unsigned jobs, llvm::function_ref<llvm::Error(size_t)> task) {
  std::mutex mu;
  size_t failedAt = n;
  llvm::Error failure = llvm::Error::success();
  auto run = [&](size_t i) {
    llvm::Error e = guarded(task, i);
    if (!e) return;
    std::lock_guard<std::mutex> lock(mu);
    if (i > failedAt) return llvm::consumeError(std::move(e));
    llvm::consumeError(std::move(failure));
    failure = std::move(e);
    failedAt = i;
  };
  unsigned threads = clampJobs(jobs, n);
  if (threads == 1) {
    for (size_t i = 0; i < n; ++i) run(i);
    return failure;
  }
  llvm::DefaultThreadPool pool(llvm::hardware_concurrency(threads));
  for (size_t i = 0; i < n; ++i) pool.async([&run, i] { run(i); });
  pool.wait();
  return failure;
}

} // namespace rapid
