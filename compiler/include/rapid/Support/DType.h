//===- DType.h - Element types of tensors and math --------------*- C++ -*-===//
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace rapid {

enum class DType : uint8_t { FP32, TF32, BF16, FP16, FP8 };

/// Bytes per element in memory (TF32 is stored as FP32).
constexpr double bytesOf(DType t) {
  switch (t) {
  case DType::FP32:
  case DType::TF32: return 4;
  case DType::BF16:
  case DType::FP16: return 2;
  case DType::FP8: return 1;
  }
  return 4;
}

constexpr std::string_view nameOf(DType t) {
  switch (t) {
  case DType::FP32: return "fp32";
  case DType::TF32: return "tf32";
  case DType::BF16: return "bf16";
  case DType::FP16: return "fp16";
  case DType::FP8: return "fp8";
  }
  return "?";
}

inline std::optional<DType> parseDType(std::string_view s) {
  for (DType t : {DType::FP32, DType::TF32, DType::BF16, DType::FP16, DType::FP8})
    if (nameOf(t) == s) return t;
  return std::nullopt;
}

} // namespace rapid
