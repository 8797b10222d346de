//===- Distributed.cpp - Points and samples over MPI ranks ----------------===//
//
// Rank 0 is the coordinator: its main thread answers the other ranks (each
// message from a worker carries its last result and asks for the next
// index), while -j threads of its own take indices from the same counter.
// Only the main thread calls MPI (MPI_THREAD_FUNNELED). Waits poll with a
// short sleep instead of blocking in MPI: Open MPI's blocking calls spin,
// and a spinning coordinator or idle worker would take a core from the
// ranks that compute.
//===----------------------------------------------------------------------===//
#include "rapid/Driver/Distributed.h"

#include "rapid/Driver/Parallel.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <optional>
#include <thread>
#include <unistd.h>

#ifdef RAPID_HAVE_MPI
#include <mpi.h>
#endif

namespace rapid::mpi {
namespace {

int theRank = 0, theSize = 1;
bool settledFlag = false;
std::atomic<bool> distributing{false}; // a distributedFor is running on this rank

/// The number of processes a launcher says it started, or 1.
long launchedSize() {
  for (const char *var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char *v = std::getenv(var)) return std::max(1L, std::atol(v));
  return 1;
}

llvm::Error locally(size_t n, unsigned jobs, llvm::function_ref<llvm::Expected<std::string>(size_t)> task) {
  return parallelFor(n, jobs, [&](size_t i) -> llvm::Error {
    llvm::Expected<std::string> r = task(i);
    return r ? llvm::Error::success() : r.takeError();
  });
}

#ifdef RAPID_HAVE_MPI
/// Set by mpirun (Open MPI) or by a PMI/PMIx launcher such as Slurm's srun.
bool launched() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") || std::getenv("PMI_RANK");
}

/// What one task produced: its text, or its error's message.
struct Outcome {
  bool done = false, ok = false;
  std::string text;
};

Outcome outcomeOf(llvm::Expected<std::string> r) {
  if (!r) return {true, false, llvm::toString(r.takeError())};
  return {true, true, std::move(*r)};
}

/// The lowest failing index's error, or success.
llvm::Error firstError(const std::vector<Outcome> &outcomes) {
  for (const Outcome &o : outcomes)
    if (o.done && !o.ok) return llvm::createStringError(llvm::inconvertibleErrorCode(), o.text);
  return llvm::Error::success();
}

enum Tag { Result = 1, Assign = 2, Final = 3 };

void put(std::string &buf, int64_t v) { buf.append(reinterpret_cast<const char *>(&v), sizeof v); }
int64_t get(const char *&p) {
  int64_t v;
  std::memcpy(&v, p, sizeof v);
  p += sizeof v;
  return v;
}
void putOutcome(std::string &buf, int64_t index, const Outcome &o) {
  put(buf, index);
  put(buf, o.ok);
  put(buf, int64_t(o.text.size()));
  buf += o.text;
}
std::pair<int64_t, Outcome> getOutcome(const char *&p) {
  int64_t index = get(p);
  Outcome o;
  o.done = true;
  o.ok = get(p) != 0;
  int64_t len = get(p);
  o.text.assign(p, size_t(len));
  p += len;
  return {index, std::move(o)};
}

void nap() { std::this_thread::sleep_for(std::chrono::microseconds(200)); }

/// The next message with `tag` from `source`, received whole.
std::pair<int, std::string> receive(int source, int tag) {
  int flag = 0;
  MPI_Status st;
  while (MPI_Iprobe(source, tag, MPI_COMM_WORLD, &flag, &st), !flag) nap();
  int count = 0;
  MPI_Get_count(&st, MPI_BYTE, &count);
  std::string buf(size_t(count), '\0');
  MPI_Recv(buf.data(), count, MPI_BYTE, st.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return {st.MPI_SOURCE, std::move(buf)};
}

void send(const std::string &buf, int dest, int tag) {
  MPI_Send(buf.data(), int(buf.size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD);
}

llvm::Error coordinate(size_t n, unsigned jobs, llvm::function_ref<llvm::Expected<std::string>(size_t)> task,
                       llvm::function_ref<void(size_t, std::string)> adopt) {
  std::mutex mu;
  size_t next = 0;
  std::vector<Outcome> outcomes(n);
  std::vector<int64_t> owner(n, 0);
  auto take = [&]() -> int64_t {
    std::lock_guard<std::mutex> lock(mu);
    return next < n ? int64_t(next++) : -1;
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0, k = clampJobs(jobs, n); t < k; ++t)
    threads.emplace_back([&] {
      for (int64_t i; (i = take()) >= 0;) {
        Outcome o = outcomeOf(task(size_t(i)));
        std::lock_guard<std::mutex> lock(mu);
        outcomes[size_t(i)] = std::move(o);
      }
    });
  for (int active = theSize - 1; active > 0;) {
    auto [source, msg] = receive(MPI_ANY_SOURCE, Result);
    const char *p = msg.data();
    auto [index, o] = getOutcome(p);
    if (index >= 0) {
      if (o.ok) adopt(size_t(index), o.text);
      std::lock_guard<std::mutex> lock(mu);
      owner[size_t(index)] = source;
      outcomes[size_t(index)] = std::move(o);
    }
    int64_t assigned = take();
    active -= assigned < 0;
    std::string reply;
    put(reply, assigned);
    send(reply, source, Assign);
  }
  for (std::thread &t : threads) t.join();
  std::string all;
  for (size_t i = 0; i < n; ++i) {
    put(all, owner[i]);
    putOutcome(all, int64_t(i), outcomes[i]);
  }
  for (int r = 1; r < theSize; ++r) send(all, r, Final);
  return firstError(outcomes);
}

llvm::Error work(size_t n, llvm::function_ref<llvm::Expected<std::string>(size_t)> task,
                 llvm::function_ref<void(size_t, std::string)> adopt) {
  int64_t index = -1;
  Outcome last;
  for (;;) {
    std::string msg;
    putOutcome(msg, index, last);
    send(msg, 0, Result);
    std::string reply = receive(0, Assign).second;
    const char *p = reply.data();
    index = get(p);
    if (index < 0) break;
    last = outcomeOf(task(size_t(index)));
  }
  std::string all = receive(0, Final).second;
  const char *p = all.data();
  std::vector<Outcome> outcomes(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t from = get(p);
    auto [index, o] = getOutcome(p);
    if (o.ok && from != theRank) adopt(i, o.text);
    outcomes[i] = std::move(o);
  }
  return firstError(outcomes);
}
#endif

} // namespace

Session::Session(int &argc, char **&argv) {
#ifdef RAPID_HAVE_MPI
  if (!launched()) return;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &theRank);
  MPI_Comm_size(MPI_COMM_WORLD, &theSize);
  if (theSize == 1 && launchedSize() > 1)
    problem = "the launcher started several processes but MPI sees one (with Slurm, run srun --mpi=pmix)";
#else
  if (launchedSize() > 1)
    problem = "rapidc was built without MPI, so every process the launcher started would run every point and "
              "write the same files; install libopenmpi-dev and build again (docs/simulation.md)";
#endif
  if (theRank != 0) { // rank 0 alone prints
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDOUT_FILENO), close(null);
  }
}

Session::~Session() {
#ifdef RAPID_HAVE_MPI
  int started = 0, finished = 0;
  MPI_Initialized(&started);
  MPI_Finalized(&finished);
  if (started && !finished) MPI_Finalize();
#endif
}

void Session::abort(int status) {
#ifdef RAPID_HAVE_MPI
  int started = 0;
  MPI_Initialized(&started);
  if (started) MPI_Abort(MPI_COMM_WORLD, status);
#endif
  std::exit(status);
}

int rank() { return theRank; }
int size() { return theSize; }
bool inLockstep() { return theSize == 1 || settledFlag; }
void settle() { settledFlag = true; }

llvm::Error agree(uint64_t hash, llvm::StringRef what) {
#ifdef RAPID_HAVE_MPI
  if (theSize == 1) return llvm::Error::success();
  uint64_t root = hash;
  MPI_Bcast(&root, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  int differs = root != hash, anyDiffers = 0;
  MPI_Allreduce(&differs, &anyDiffers, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (anyDiffers)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the MPI ranks disagree on the %s (does every node read the same files?)",
                                   what.str().c_str());
#endif
  return llvm::Error::success();
}

void broadcast(std::vector<size_t> &values) {
#ifdef RAPID_HAVE_MPI
  if (theSize == 1) return;
  uint64_t count = values.size();
  MPI_Bcast(&count, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  std::vector<uint64_t> wide(values.begin(), values.end());
  wide.resize(count);
  MPI_Bcast(wide.data(), int(count), MPI_UINT64_T, 0, MPI_COMM_WORLD);
  values.assign(wide.begin(), wide.end());
#endif
}

llvm::Error distributedFor(size_t n, unsigned jobs, llvm::function_ref<llvm::Expected<std::string>(size_t)> task,
                           llvm::function_ref<void(size_t, std::string)> adopt) {
  if (theSize == 1 || distributing) return locally(n, jobs, task);
#ifdef RAPID_HAVE_MPI
  distributing = true;
  llvm::Error e = theRank == 0 ? coordinate(n, jobs, task, adopt) : work(n, task, adopt);
  distributing = false;
  return e;
#else
  return locally(n, jobs, task);
#endif
}

} // namespace rapid::mpi
