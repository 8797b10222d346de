//===- Distributed.h - Points and samples over MPI ranks --------*- C++ -*-===//
//
// `mpirun -np N rapidc FILE` (or Slurm's `srun`) starts N copies of rapidc;
// each parses the same file, and the tasks of a sweep (its points) or of a
// single point (its fault samples) are handed out one at a time by rank 0,
// which also runs its own share on -j threads. Results travel as the text a
// journal line or sample already is, so every rank ends with the same
// results as a one-process run, in the same order, to the same bytes.
//
// rapidc is built with MPI when Debian's libopenmpi-dev is present (CMake
// option RAPID_MPI); a process that no launcher started never calls into MPI.
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace rapid::mpi {

/// Starts MPI when a launcher started this process (mpirun, srun) and ends
/// it on destruction. On ranks other than 0 the standard output goes to
/// /dev/null: rank 0 prints and writes every file. A rapidc built without
/// MPI that finds itself launched by one is an error (every copy would run
/// every point and write the same files).
class Session {
public:
  Session(int &argc, char **&argv);
  ~Session();
  /// Non-empty when this process cannot run as the launcher asked.
  const std::string &error() const { return problem; }
  /// Ends the job with `status` now, from any rank: for an error a rank hit
  /// before the others could know, which would otherwise leave them waiting.
  [[noreturn]] void abort(int status);

private:
  std::string problem;
};

/// This process's rank and the number of ranks (0 and 1 without a launcher).
int rank();
int size();
inline bool isRoot() { return rank() == 0; }
/// True once every rank has passed the last exchange it will make (a sweep
/// calls settle() when it is over), so that no rank can be left waiting on
/// one that stops with an error: from then on, ranks end on their own.
bool inLockstep();
void settle();

/// An error on every rank unless every rank computed the same `hash` (of
/// the points it parsed): ranks that read different files would otherwise
/// fill each other's slots with the wrong results.
llvm::Error agree(uint64_t hash, llvm::StringRef what);

/// Rank 0's `values`, on every rank.
void broadcast(std::vector<size_t> &values);

/// Runs task(i) once for every i in [0, n), spread over the ranks: rank 0
/// hands out indices one at a time and runs its own on clampJobs(jobs, n)
/// threads; other ranks run one at a time. A task stores its result where
/// it runs and returns it as text; `adopt(i, text)` receives, on every rank,
/// the text of each result another rank computed (on rank 0 as it arrives,
/// so a journal loses nothing to a kill; elsewhere at the end). adopt calls
/// are not concurrent with each other, but may be with tasks. The error
/// returned, on every rank, is the lowest failing index's. With one rank,
/// or inside a task of an enclosing distributedFor, this is parallelFor.
llvm::Error distributedFor(size_t n, unsigned jobs, llvm::function_ref<llvm::Expected<std::string>(size_t)> task,
                           llvm::function_ref<void(size_t, std::string)> adopt);

} // namespace rapid::mpi
