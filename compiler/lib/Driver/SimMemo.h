//===- SimMemo.h - Points that simulate alike, simulated once (private) -*- C++ -*-===//
//
// A sweep or a search often holds points whose simulations are one and the
// same: ZeRO 1 and 2 (only memory differs), GPU variants no kernel's time
// sees (a larger HBM). What a simulation reads is the program's ops and
// layout, the network and the runtime's settings (what `--emit=chakra`
// writes for rapid-sim): points equal in all of it share one simulation.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/IR/IR.h"

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace rapid::run {

using SimKey = std::array<uint8_t, 32>;

/// A digest (BLAKE3) of everything a simulation of `prog` reads: its ops and
/// layout, `network` and `system` (their JSON) and the mode.
SimKey simKey(const ir::Program &prog, const std::string &network, const std::string &system, bool hierarchical,
              bool reduce);

/// The same for one collective timed alone on `members` (Run.cpp's
/// timeCollectives): points of a search share most of theirs.
SimKey collectiveKey(const ir::Op &op, const std::vector<int64_t> &members, const std::string &network,
                     const std::string &system);

/// Results by key, shared by the threads of a run; bounded so that a huge
/// sweep keeps its memory (later results are then simply not kept).
template <typename T> class SimMemo {
public:
  std::optional<T> find(const SimKey &k) {
    std::lock_guard<std::mutex> lock(m_);
    auto it = results_.find(k);
    if (it == results_.end()) return std::nullopt;
    return it->second;
  }
  void insert(const SimKey &k, T value) {
    std::lock_guard<std::mutex> lock(m_);
    if (results_.size() < kMaxEntries) results_.emplace(k, std::move(value));
  }

private:
  static constexpr size_t kMaxEntries = 4096;
  std::mutex m_;
  std::map<SimKey, T> results_;
};

} // namespace rapid::run
