//===- Attr.h - Typed views of Chakra node attributes ----------*- C++ -*-===//
//
// Chakra writers disagree on encodings (comm_size as int64, uint64 or int32;
// is_cpu_op as bool or int32), so like upstream's getters every integer oneof
// reads as any integer. A float never reads as an integer: that would silently
// truncate a size, so it is reported as a type error instead.
//===----------------------------------------------------------------------===//
#pragma once

#include "et_def.pb.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rapid::trace {

using ChakraProtoMsg::AttributeProto;

/// The integer value of any integer or bool oneof member, else nullopt.
std::optional<int64_t> attrAsInt(const AttributeProto &a);
/// Integers and floats as a double, else nullopt.
std::optional<double> attrAsDouble(const AttributeProto &a);
/// The string of a string_val, else nullopt.
std::optional<std::string> attrAsString(const AttributeProto &a);
/// A bool_list, or an integer list read as booleans, else nullopt.
std::optional<std::vector<bool>> attrAsBoolList(const AttributeProto &a);

/// "int64" for int64_val, "bool_list" ...: the oneof member's name stem.
std::string attrTypeName(const AttributeProto &a);
/// Stable text of the value: 42, 1.5, "text", [1, 0], <none>.
std::string attrValueText(const AttributeProto &a);
/// The value as JSON (lists as arrays, bytes as their length).
llvm::json::Value attrValueJson(const AttributeProto &a);

} // namespace rapid::trace
