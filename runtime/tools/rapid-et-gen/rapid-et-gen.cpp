//===- rapid-et-gen.cpp - Write small Chakra traces for tests -------------===//
//
// Test-only. Reads a line-based description and writes <prefix>.<rank>.et:
//
//   version 0.0.4            GlobalMetadata.version ("none": no metadata record)
//   ranks 16                 how many ranks 'rank *' means
//   rank 0                   following nodes belong to rank 0 ('*': to all)
//   1 COMP dur=5             id, kind, key=value attributes
//   2 COLL ALL_REDUCE size=1048576 deps=1 pg=1 dims=1,0
//   3 SEND dst=1 tag=7 size=1000 ctrl=2
//
// Keys: name deps ctrl dur ns size src dst tag pg dims ops tensor cpu type,
// and attr.<type>.<name>=<value> (type: int64 uint64 int32 bool double
// string) for anything else, e.g. deliberately wrong encodings.
//===----------------------------------------------------------------------===//

#include "rapid/Trace/EtReader.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>
#include <map>

using namespace llvm;
using ChakraProtoMsg::AttributeProto;
using ChakraProtoMsg::Node;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<description>"), cl::Required);
static cl::opt<std::string> outPrefix("o", cl::desc("output prefix"), cl::Required);

[[noreturn]] static void die(unsigned line, const std::string &msg) {
  errs() << fmt::format("rapid-et-gen: error: {}:{}: {}\n", inputFile.getValue(), line, msg);
  exit(1);
}

static int64_t toInt(unsigned line, StringRef s) {
  int64_t v;
  if (s.getAsInteger(0, v))
    die(line, fmt::format("'{}' is not an integer", s.str()));
  return v;
}

static void setTyped(unsigned line, AttributeProto &a, StringRef type, StringRef value) {
  if (type == "int64") a.set_int64_val(toInt(line, value));
  else if (type == "uint64") a.set_uint64_val(uint64_t(toInt(line, value)));
  else if (type == "int32") a.set_int32_val(int32_t(toInt(line, value)));
  else if (type == "bool") a.set_bool_val(value == "true" || value == "1");
  else if (type == "double") a.set_double_val(std::stod(value.str()));
  else if (type == "string") a.set_string_val(value.str());
  else die(line, fmt::format("unknown attribute type '{}'", type.str()));
}

static void addAttr(Node &n, unsigned line, StringRef name, StringRef type, StringRef value) {
  auto *a = n.add_attr();
  a->set_name(name.str());
  setTyped(line, *a, type, value);
}

/// The short keys and the encoding the reference generators use for each.
static void setKey(Node &n, unsigned line, StringRef key, StringRef value) {
  static const std::map<std::string, std::pair<const char *, const char *>> known = {
      {"ns", {"rapid_time_ns", "int64"}}, {"size", {"comm_size", "int64"}},
      {"src", {"comm_src", "int32"}},     {"dst", {"comm_dst", "int32"}},
      {"tag", {"comm_tag", "int32"}},     {"pg", {"pg_name", "string"}},
      {"ops", {"num_ops", "int64"}},      {"tensor", {"tensor_size", "int64"}},
      {"cpu", {"is_cpu_op", "bool"}},     {"type", {"comm_type", "int64"}},
      {"measured", {"rapid_measured_ns", "int64"}}};
  SmallVector<StringRef> parts;
  if (key == "name") {
    n.set_name(value.str());
  } else if (key == "deps" || key == "ctrl") {
    value.split(parts, ',', -1, false);
    for (auto p : parts)
      key == "deps" ? n.add_data_deps(toInt(line, p)) : n.add_ctrl_deps(toInt(line, p));
  } else if (key == "dur") {
    n.set_duration_micros(toInt(line, value));
  } else if (key == "dims") {
    auto *a = n.add_attr();
    a->set_name("involved_dim");
    value.split(parts, ',', -1, false);
    for (auto p : parts)
      a->mutable_bool_list()->add_values(p == "1" || p == "true");
  } else if (auto it = known.find(key.str()); it != known.end()) {
    addAttr(n, line, it->second.first, it->second.second, value);
  } else if (key.starts_with("attr.")) {
    auto [type, name] = key.drop_front(5).split('.');
    addAttr(n, line, name, type, value);
  } else {
    die(line, fmt::format("unknown key '{}'", key.str()));
  }
}

static void setKind(Node &n, unsigned line, SmallVectorImpl<StringRef> &words, size_t &next) {
  static const std::map<std::string, int> kinds = {
      {"INVALID", 0}, {"METADATA", 1}, {"MEM_LOAD", 2}, {"MEM_STORE", 3},
      {"COMP", 4},    {"SEND", 5},     {"RECV", 6},     {"COLL", 7}};
  auto it = kinds.find(words[1].str());
  if (it == kinds.end())
    die(line, fmt::format("unknown node kind '{}'", words[1].str()));
  n.set_type(ChakraProtoMsg::NodeType(it->second));
  next = 2;
  if (it->second != 7 || words.size() < 3 || words[2].contains('='))
    return;
  ChakraProtoMsg::CollectiveCommType coll;
  if (!ChakraProtoMsg::CollectiveCommType_Parse(words[2].str(), &coll))
    die(line, fmt::format("unknown collective '{}'", words[2].str()));
  addAttr(n, line, "comm_type", "int64", std::to_string(int(coll)));
  next = 3;
}

/// The per-rank output being built, line by line.
class Generator {
public:
  void line(unsigned no, StringRef text) {
    SmallVector<StringRef> words;
    SplitString(text.split('#').first.trim(), words);
    if (words.empty())
      return;
    if (words[0] == "version" && words.size() == 2)
      version = words[1].str();
    else if (words[0] == "ranks" && words.size() == 2)
      numRanks = int(toInt(no, words[1]));
    else if (words[0] == "rank" && words.size() == 2)
      selectRank(no, words[1]);
    else
      node(no, words);
  }

  bool write() const {
    for (auto &[r, bytes] : files) {
      std::error_code ec;
      raw_fd_ostream os(fmt::format("{}.{}.et", outPrefix.getValue(), r), ec);
      if (ec) {
        errs() << "rapid-et-gen: error: " << ec.message() << "\n";
        return false;
      }
      os << bytes;
    }
    return true;
  }

private:
  /// 'rank N' or 'rank *' (every rank of 'ranks'); opens the files.
  void selectRank(unsigned no, StringRef which) {
    allRanks = which == "*";
    rank = allRanks ? 0 : int(toInt(no, which));
    for (int r = first(); r < last(); ++r) {
      if (!files.count(r) && version != "none") {
        ChakraProtoMsg::GlobalMetadata meta;
        meta.set_version(version);
        rapid::trace::appendFramed(files[r], meta);
      }
      files[r];
    }
  }

  void node(unsigned no, SmallVectorImpl<StringRef> &words) {
    if (words.size() < 2)
      die(no, "expected '<id> <KIND> key=value...'");
    Node n;
    n.set_id(uint64_t(toInt(no, words[0])));
    size_t next;
    setKind(n, no, words, next);
    n.set_name(fmt::format("{}_{}", words[1].str(), n.id()));
    for (; next < words.size(); ++next) {
      auto [key, value] = words[next].split('=');
      setKey(n, no, key, value);
    }
    for (int r = first(); r < last(); ++r)
      rapid::trace::appendFramed(files[r], n);
  }

  int first() const { return allRanks ? 0 : rank; }
  int last() const { return allRanks ? numRanks : rank + 1; }

  std::map<int, std::string> files;
  std::string version = "0.0.4";
  int rank = 0, numRanks = 0;
  bool allRanks = false;
};

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "write Chakra traces from a description (tests)\n");
  auto buf = MemoryBuffer::getFile(inputFile);
  if (!buf) {
    errs() << "rapid-et-gen: error: cannot read " << inputFile << "\n";
    return 1;
  }
  SmallVector<StringRef> lines;
  (*buf)->getBuffer().split(lines, '\n');
  Generator gen;
  for (unsigned i = 0; i < lines.size(); ++i)
    gen.line(i + 1, lines[i]);
  return gen.write() ? 0 : 1;
}
