//===- Parser.cpp - Running ANTLR and reporting syntax errors -------------===//
//
// Before ANTLR sees a buffer, three checks keep it from failing in ways that
// are not diagnostics: the text must be valid UTF-8 (ANTLR's conversion to
// code points throws otherwise), it must have at most kMaxTokens tokens (the
// parse tree's memory), and nesting must stay within kMaxNesting
// (ANTLR's recursive descent recurses once per bracket, brace or prefix
// operator, and so do the AST builder and the evaluator). Anything ANTLR
// still throws is caught here, its one boundary.
//===----------------------------------------------------------------------===//
#include "rapid/Parse/Parser.h"

#include "Builder.h"
#include "RapidLexer.h"

#include "llvm/Support/ConvertUTF.h"

#include <cstring>

namespace rapid {
namespace {

/// Brackets, braces and prefix operators nest at most this deep: real files
/// nest a handful of levels; 256 keeps every recursion over the tree shallow.
constexpr size_t kMaxNesting = 256;
/// A file holds at most this many tokens: ANTLR's parse tree takes about
/// 600 bytes a token, so 2^20 tokens parse in well under a GiB and a few
/// seconds; the standard library's largest file has a few thousand.
constexpr size_t kMaxTokens = size_t(1) << 20;

/// A location from ANTLR's line and column: lines agree with the SourceMgr
/// (both count '\n'), columns count code points where the SourceMgr counts bytes.
llvm::SMLoc locAt(llvm::SourceMgr &sm, unsigned bufferId, size_t line, size_t column) {
  llvm::SMLoc start = sm.FindLocForLineAndColumn(bufferId, line, 1);
  if (!start.isValid()) return start;
  const char *p = start.getPointer(), *end = sm.getMemoryBuffer(bufferId)->getBufferEnd();
  for (size_t i = 0; i < column && p < end && *p != '\n'; ++i)
    for (++p; p < end && (static_cast<unsigned char>(*p) & 0xC0) == 0x80;) ++p;
  return llvm::SMLoc::getFromPointer(p);
}

/// Turns ANTLR's error callbacks into rapid diagnostics at the offending text.
class ErrorListener : public antlr4::BaseErrorListener {
public:
  ErrorListener(DiagnosticEngine &diags, unsigned bufferId) : diags(diags), bufferId(bufferId) {}

  void syntaxError(antlr4::Recognizer *rec, antlr4::Token *bad, size_t line, size_t column,
                   const std::string &msg, std::exception_ptr) override {
    if (reportMissingSemicolon(rec, bad, msg)) return;
    llvm::SMLoc l = locAt(diags.sourceMgr(), bufferId, line, column);
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
    llvm::SMLoc start = locAt(diags.sourceMgr(), bufferId, prev->getLine(), prev->getCharPositionInLine());
    llvm::SMLoc l = llvm::SMLoc::getFromPointer(start.getPointer() + prev->getText().size());
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
    // Where a name may stand, 'x' is one: the grammar lists it beside ID only
    // because it also joins a shape's extents.
    if (msg.find(", ID}") != std::string::npos)
      for (const char *x : {"'x', ", ", 'x'"})
        if (size_t p = msg.find(x); p != std::string::npos) msg.erase(p, std::strlen(x));
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

/// Reports the first byte that is not part of valid UTF-8.
bool validUtf8(unsigned bufferId, DiagnosticEngine &diags) {
  llvm::StringRef text = diags.sourceMgr().getMemoryBuffer(bufferId)->getBuffer();
  const auto *p = reinterpret_cast<const llvm::UTF8 *>(text.begin());
  if (llvm::isLegalUTF8String(&p, reinterpret_cast<const llvm::UTF8 *>(text.end())))
    return true;
  llvm::SMLoc at = llvm::SMLoc::getFromPointer(reinterpret_cast<const char *>(p));
  diags.report(DiagID::InvalidUtf8, llvm::SMRange(at, at), unsigned(*p));
  return false;
}

/// The nesting of brackets, braces and prefix operators at each token: each
/// open bracket or brace counts a level, and so does each prefix '-' or '!'
/// until its operand ends (with the bracket it opens, if any).
class Nesting {
public:
  /// The depth once `tok` is read.
  size_t next(antlr4::Token *tok) {
    using L = grammar::RapidLexer;
    std::string text = tok->getType() == L::EOF ? "" : tok->getText();
    bool afterOperand = prevType == L::NUMBER || prevType == L::ID || prevType == L::STRING || prevText == ")" ||
                        prevText == "]" || prevText == "%";
    prevType = tok->getType();
    prevText = text;
    if ((text == "-" || text == "!") && !afterOperand) {
      ++prefix;
    } else if (text == "(" || text == "[" || text == "{") {
      levels.push_back(prefix + 1);
      depth += prefix + 1;
      prefix = 0;
    } else {
      if ((text == ")" || text == "]" || text == "}") && !levels.empty()) {
        depth -= levels.back();
        levels.pop_back();
      }
      prefix = 0;
    }
    return depth + prefix;
  }

private:
  std::vector<size_t> levels; ///< per open bracket: the levels it and the prefix operators before it hold
  size_t depth = 0, prefix = 0;
  size_t prevType = grammar::RapidLexer::EOF;
  std::string prevText;
};

/// Lexes the buffer a token at a time, reporting the first token past
/// kMaxTokens or nested deeper than kMaxNesting, then rewinds for the parser.
bool withinLimits(AntlrRun &run, unsigned bufferId, DiagnosticEngine &diags) {
  Nesting nesting;
  for (size_t count = 1;; ++count, run.tokens.consume()) {
    antlr4::Token *tok = run.tokens.LT(1);
    size_t depth = nesting.next(tok);
    if (count > kMaxTokens || depth > kMaxNesting) {
      llvm::SMLoc l = locAt(diags.sourceMgr(), bufferId, tok->getLine(), tok->getCharPositionInLine());
      if (count > kMaxTokens)
        diags.report(DiagID::TooManyTokens, llvm::SMRange(l, l), kMaxTokens);
      else
        diags.report(DiagID::NestingTooDeep, llvm::SMRange(l, l), tok->getText(), kMaxNesting);
      return false;
    }
    if (tok->getType() == antlr4::Token::EOF) break;
  }
  run.tokens.seek(0);
  return true;
}

/// Runs `parse` (ANTLR and the builder) after the checks above, turning any
/// exception that still escapes into a diagnostic.
template <class Parse> auto guarded(unsigned bufferId, DiagnosticEngine &diags, Parse &&parse) -> decltype(parse(
    std::declval<AntlrRun &>())) {
  if (!validUtf8(bufferId, diags)) return nullptr;
  try {
    AntlrRun run(bufferId, diags);
    if (!withinLimits(run, bufferId, diags)) return nullptr;
    return parse(run);
  } catch (const std::exception &e) {
    llvm::SMLoc start = llvm::SMLoc::getFromPointer(diags.sourceMgr().getMemoryBuffer(bufferId)->getBufferStart());
    diags.report(DiagID::ParserFailed, llvm::SMRange(start, start), e.what());
    return nullptr;
  }
}

} // namespace

std::unique_ptr<ast::Module> parseModule(unsigned bufferId, DiagnosticEngine &diags) {
  return guarded(bufferId, diags, [&](AntlrRun &run) -> std::unique_ptr<ast::Module> {
    auto *tree = run.parser.file();
    if (run.listener.failed)
      return nullptr;
    parse::Builder builder(diags, bufferId);
    std::unique_ptr<ast::Module> module = builder.file(tree);
    return builder.failed() ? nullptr : std::move(module);
  });
}

ast::StmtPtr parseStatement(unsigned bufferId, DiagnosticEngine &diags) {
  return guarded(bufferId, diags, [&](AntlrRun &run) -> ast::StmtPtr {
    auto *tree = run.parser.stmtOnly();
    if (run.listener.failed)
      return nullptr;
    parse::Builder builder(diags, bufferId);
    ast::StmtPtr stmt = builder.stmt(tree->stmt());
    return builder.failed() ? nullptr : std::move(stmt);
  });
}

} // namespace rapid
