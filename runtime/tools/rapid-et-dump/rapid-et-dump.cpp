//===- rapid-et-dump.cpp - Print a Chakra .et file ------------------------===//
//
// rapid-et-dump [--format=text|json] [--lenient] FILE.et
//===----------------------------------------------------------------------===//

#include "rapid/Trace/Dump.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<file.et>"), cl::Required);
static cl::opt<std::string> outFormat("format", cl::desc("text or json"), cl::init("text"));
static cl::opt<bool> lenient("lenient", cl::desc("accept a trace with no GlobalMetadata"));

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "print a Chakra execution trace\n");
  if (outFormat != "text" && outFormat != "json") {
    errs() << "rapid-et-dump: error: --format must be 'text' or 'json'\n";
    return 1;
  }
  rapid::trace::ReadOptions opts;
  opts.lenient = lenient;
  auto fmt = outFormat == "json" ? rapid::trace::DumpFormat::Json : rapid::trace::DumpFormat::Text;
  if (auto err = rapid::trace::dumpEtFile(inputFile, fmt, opts, outs())) {
    errs() << "rapid-et-dump: error: " << toString(std::move(err)) << "\n";
    return 1;
  }
  return 0;
}
