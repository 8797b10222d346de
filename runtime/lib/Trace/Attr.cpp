//===- Attr.cpp - Typed views of Chakra node attributes -------------------===//

#include "rapid/Trace/Attr.h"

#include <fmt/format.h>

namespace rapid::trace {

using VC = AttributeProto::ValueCase;

std::optional<int64_t> attrAsInt(const AttributeProto &a) {
  switch (a.value_case()) {
  case VC::kInt32Val: return a.int32_val();
  case VC::kInt64Val: return a.int64_val();
  case VC::kUint32Val: return a.uint32_val();
  case VC::kUint64Val: return int64_t(a.uint64_val());
  case VC::kSint32Val: return a.sint32_val();
  case VC::kSint64Val: return a.sint64_val();
  case VC::kFixed32Val: return a.fixed32_val();
  case VC::kFixed64Val: return int64_t(a.fixed64_val());
  case VC::kSfixed32Val: return a.sfixed32_val();
  case VC::kSfixed64Val: return a.sfixed64_val();
  case VC::kBoolVal: return a.bool_val() ? 1 : 0;
  default: return std::nullopt;
  }
}

std::optional<double> attrAsDouble(const AttributeProto &a) {
  if (a.value_case() == VC::kDoubleVal)
    return a.double_val();
  if (a.value_case() == VC::kFloatVal)
    return a.float_val();
  if (auto i = attrAsInt(a))
    return double(*i);
  return std::nullopt;
}

std::optional<std::string> attrAsString(const AttributeProto &a) {
  if (a.value_case() == VC::kStringVal)
    return a.string_val();
  return std::nullopt;
}

template <class List> static std::vector<bool> truthy(const List &l) {
  std::vector<bool> out;
  for (auto v : l.values())
    out.push_back(v != 0);
  return out;
}

std::optional<std::vector<bool>> attrAsBoolList(const AttributeProto &a) {
  switch (a.value_case()) {
  case VC::kBoolList: return truthy(a.bool_list());
  case VC::kInt32List: return truthy(a.int32_list());
  case VC::kInt64List: return truthy(a.int64_list());
  case VC::kUint32List: return truthy(a.uint32_list());
  case VC::kUint64List: return truthy(a.uint64_list());
  default: return std::nullopt;
  }
}

std::string attrTypeName(const AttributeProto &a) {
  // The oneof descriptor names the member; strip the "_val" suffix.
  const auto *field = a.GetDescriptor()->FindFieldByNumber(int(a.value_case()));
  if (!field)
    return "none";
  std::string name = field->name();
  if (name.ends_with("_val"))
    name.resize(name.size() - 4);
  return name;
}

/// Every list message has one repeated field `values`; reflection walks it so
/// fifteen list types need no fifteen printers.
static std::vector<llvm::json::Value> listValues(const AttributeProto &a) {
  const auto *field = a.GetDescriptor()->FindFieldByNumber(int(a.value_case()));
  const auto &list = a.GetReflection()->GetMessage(a, field);
  const auto *refl = list.GetReflection();
  const auto *values = list.GetDescriptor()->FindFieldByName("values");
  std::vector<llvm::json::Value> out;
  using FD = google::protobuf::FieldDescriptor;
  for (int i = 0, n = refl->FieldSize(list, values); i < n; ++i) {
    switch (values->cpp_type()) {
    case FD::CPPTYPE_INT32: out.emplace_back(refl->GetRepeatedInt32(list, values, i)); break;
    case FD::CPPTYPE_INT64: out.emplace_back(refl->GetRepeatedInt64(list, values, i)); break;
    case FD::CPPTYPE_UINT32: out.emplace_back(refl->GetRepeatedUInt32(list, values, i)); break;
    case FD::CPPTYPE_UINT64: out.emplace_back(refl->GetRepeatedUInt64(list, values, i)); break;
    case FD::CPPTYPE_DOUBLE: out.emplace_back(refl->GetRepeatedDouble(list, values, i)); break;
    case FD::CPPTYPE_FLOAT: out.emplace_back(double(refl->GetRepeatedFloat(list, values, i))); break;
    case FD::CPPTYPE_BOOL: out.emplace_back(refl->GetRepeatedBool(list, values, i)); break;
    default: out.emplace_back(refl->GetRepeatedString(list, values, i)); break;
    }
  }
  return out;
}

llvm::json::Value attrValueJson(const AttributeProto &a) {
  if (auto i = attrAsInt(a); i && a.value_case() != VC::kBoolVal)
    return *i;
  switch (a.value_case()) {
  case VC::kBoolVal: return a.bool_val();
  case VC::kDoubleVal: return a.double_val();
  case VC::kFloatVal: return double(a.float_val());
  case VC::kStringVal: return a.string_val();
  case VC::kBytesVal: return int64_t(a.bytes_val().size());
  case VC::VALUE_NOT_SET: return nullptr;
  default: return llvm::json::Array(listValues(a));
  }
}

std::string attrValueText(const AttributeProto &a) {
  if (a.value_case() == VC::VALUE_NOT_SET)
    return "<none>";
  std::string s;
  llvm::raw_string_ostream os(s);
  os << attrValueJson(a);
  return s;
}

} // namespace rapid::trace
