//===- Parser.cpp - Running ANTLR and reporting syntax errors -------------===//
#include "rapid/Parse/Parser.h"

#include "Builder.h"
#include "RapidLexer.h"

namespace rapid {
namespace {

/// Turns ANTLR's error callbacks into rapid diagnostics at the offending text.
class ErrorListener : public antlr4::BaseErrorListener {
public:
  ErrorListener(DiagnosticEngine &diags, unsigned bufferId) : diags(diags), bufferId(bufferId) {}

  void syntaxError(antlr4::Recognizer *rec, antlr4::Token *bad, size_t line, size_t column,
                   const std::string &msg, std::exception_ptr) override {
    llvm::SourceMgr &sm = diags.sourceMgr();
    if (reportMissingSemicolon(rec, bad, msg)) return;
    // Lines are reliable; the column counts code points, which equal bytes in
    // the ASCII text where tokens live.
    llvm::SMLoc l = sm.FindLocForLineAndColumn(bufferId, line, column + 1);
    diags.report(DiagID::SyntaxError, llvm::SMRange(l, l), friendly(msg));
    failed = true;
  }
  bool failed = false;

private:
  /// A statement that ends without ';' is reported where the ';' belongs,
  /// not at the next line's first token.
  bool reportMissingSemicolon(antlr4::Recognizer *rec, antlr4::Token *bad, const std::string &msg) {
    auto *parser = dynamic_cast<antlr4::Parser *>(rec);
    if (!parser || !bad || bad->getTokenIndex() == 0 || msg.find("';'") == std::string::npos) return false;
    // The line break may sit before the offending token or, when `2 \n hidden`
    // read as a number with a unit, one token earlier.
    antlr4::TokenStream *ts = parser->getTokenStream();
    antlr4::Token *prev = ts->get(bad->getTokenIndex() - 1), *next = bad;
    if (prev->getLine() == bad->getLine() && bad->getTokenIndex() >= 2) {
      next = prev;
      prev = ts->get(bad->getTokenIndex() - 2);
    }
    if (prev->getLine() >= next->getLine()) return false;
    llvm::SourceMgr &sm = diags.sourceMgr();
    llvm::SMLoc l = sm.FindLocForLineAndColumn(bufferId, prev->getLine(),
                                               prev->getCharPositionInLine() + prev->getText().size() + 1);
    diags.report(DiagID::SyntaxError, llvm::SMRange(l, l), fmt::format("expected ';' after '{}'", prev->getText()));
    failed = true;
    return true;
  }

  // ANTLR says "mismatched input 'x' expecting ';'"; "<EOF>" reads badly.
  static std::string friendly(std::string msg) {
    for (auto [from, to] : {std::pair<std::string, std::string>{"'<EOF>'", "end of file"},
                            {"<EOF>", "end of file"}, {"mismatched input", "unexpected"},
                            {"extraneous input", "unexpected"}, {"token recognition error at:", "unexpected character"}}) {
      for (size_t p = msg.find(from); p != std::string::npos; p = msg.find(from, p + to.size()))
        msg.replace(p, from.size(), to);
    }
    return msg;
  }
  DiagnosticEngine &diags;
  unsigned bufferId;
};

/// Owns the ANTLR pipeline for one buffer.
struct AntlrRun {
  AntlrRun(unsigned bufferId, DiagnosticEngine &diags)
      : input(diags.sourceMgr().getMemoryBuffer(bufferId)->getBuffer().str()), lexer(&input),
        tokens(&lexer), parser(&tokens), listener(diags, bufferId) {
    lexer.removeErrorListeners();
    lexer.addErrorListener(&listener);
    parser.removeErrorListeners();
    parser.addErrorListener(&listener);
  }
  antlr4::ANTLRInputStream input;
  grammar::RapidLexer lexer;
  antlr4::CommonTokenStream tokens;
  grammar::RapidParser parser;
  ErrorListener listener;
};

} // namespace

std::unique_ptr<ast::Module> parseModule(unsigned bufferId, DiagnosticEngine &diags) {
  AntlrRun run(bufferId, diags);
  auto *tree = run.parser.file();
  if (run.listener.failed)
    return nullptr;
  return parse::Builder(diags.sourceMgr(), bufferId).file(tree);
}

ast::StmtPtr parseStatement(unsigned bufferId, DiagnosticEngine &diags) {
  AntlrRun run(bufferId, diags);
  auto *tree = run.parser.stmtOnly();
  if (run.listener.failed)
    return nullptr;
  return parse::Builder(diags.sourceMgr(), bufferId).stmt(tree->stmt());
}

} // namespace rapid
