#include "llvm/Support/raw_ostream.h"
int main() { llvm::outs() << "rapidc\n"; }
