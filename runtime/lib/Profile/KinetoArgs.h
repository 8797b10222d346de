//===- KinetoArgs.h - What a Kineto event's args say -------------*- C++ -*-===//
//
// The profiler writes an op's inputs ("Input Dims", "Input type", "Concrete
// Inputs") and a collective's metadata into the event's args; these read the
// parts rapid uses. Private to the reader.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Profile/Kineto.h"

#include "llvm/Support/JSON.h"

#include <optional>

namespace rapid::profile::args {

/// A matrix multiply (aten::mm, addmm, bmm, baddbmm) with its shapes.
std::optional<ShapedOp> matmul(llvm::StringRef name, const llvm::json::Object *args);
/// A scaled-dot-product attention backend with its shapes and causality.
std::optional<ShapedOp> attention(llvm::StringRef name, const llvm::json::Object *args);
/// What an nccl:* annotation says it moves: its first input; -1: unknown.
int64_t collectiveBytes(const llvm::json::Object *args);
/// Bytes per element of a "dtype" ScalarType name; -1: unknown.
int64_t scalarTypeBytes(llvm::StringRef type);
/// An id as text: pid and tid are numbers in Kineto (and in a host
/// execution trace), strings for Kineto's synthetic rows ("Spans"); "" when absent.
std::string idText(const llvm::json::Value *v);
/// An integer written as a number or as a string of one.
std::optional<int64_t> integerArg(const llvm::json::Object &args, llvm::StringRef key);

inline constexpr int64_t kMaxRank = 1 << 20;
/// "Process Group Ranks" read (docs/trace-replay.md, "Communicators"); an
/// empty list where cut short ambiguously; nullopt: not a list of ranks.
std::optional<std::vector<int>> groupRanks(const llvm::json::Value &v, int64_t size);

} // namespace rapid::profile::args
