//===- SemaImpl.h - Sema's internals (private to lib/Sema) -----*- C++ -*-===//
#pragma once

#include "rapid/AST/AST.h"
#include "rapid/Sema/Sema.h"
#include "rapid/Spec/Schema.h"

#include "llvm/Support/MemoryBuffer.h"

#include <functional>
#include <memory>
#include <set>

namespace rapid::sema {

/// Resolved fields of one declaration, by dotted path, in sorted order: what
/// Sema evaluates before it fills the typed specs (Typed.cpp).
/// Transparent (std::less<>): looked up by a field table's string_views without a copy.
using FieldValues = std::map<std::string, Value, std::less<>>;

// A checked Value into a typed member (Typed.cpp). Sema has checked the
// value against the member's row, so each conversion is direct.
void assign(const Value &v, int64_t &out);
void assign(const Value &v, double &out);
void assign(const Value &v, bool &out);
void assign(const Value &v, Distribution &out);
void assign(const Value &v, DimName &out);
void assign(const Value &v, std::string &out);
template <class Tag> void assign(const Value &v, Unit<Tag> &out) { out = Unit<Tag>(v.num()); }
template <DeclKind K> void assign(const Value &v, Ref<K> &out) { out.name = v.s; }
template <class E>
  requires std::is_enum_v<E>
void assign(const Value &v, E &out) {
  out = parseEnum<E>(v.s).value_or(E{});
}

/// The typed spec `S` from resolved values; fields absent or in error keep
/// their zero value (Sema has reported them).
template <class S> S typedSpec(const FieldValues &values) {
  S s;
  visitFields(s, [&](const FieldSpec &row, auto &member) {
    auto it = values.find(std::string(row.path));
    if (it != values.end() && !it->second.isError()) assign(it->second, member);
  });
  return s;
}

/// Where a field got its value: one expression of an assignment.
struct Binding {
  const ast::Expr *expr = nullptr;
  llvm::SMRange pathRange;
};
using Bindings = std::map<std::string, Binding, std::less<>>;

/// A declaration merged with everything it derives from, not yet evaluated.
struct Record {
  const ast::Decl *decl = nullptr;
  const KindSchema *schema = nullptr;
  Bindings fields;
  std::set<std::string, std::less<>> sections; ///< top-level sections written (training, ...)
  struct Dim {
    const ast::DimStmt *stmt;
    Bindings fields;
  };
  std::vector<Dim> dims;
  struct LinkFault {
    const ast::LinkFaultStmt *stmt;
    Bindings fromCommandLine; ///< `--set DECL.DIM(A,B).FIELD=VALUE`
  };
  std::vector<LinkFault> linkFaults;
  struct Random {
    const ast::SectionStmt *stmt;
    Bindings fields;
  };
  std::vector<Random> randoms;
  std::vector<const ast::MapStmt *> maps;
  bool mapsInherited = false; ///< a derived experiment's own `map`s replace these
  const std::string &name() const { return decl->name.name; }
};

/// Lists (literals, ranges, pow2 and range) hold at most this many values:
/// sweep axes are their main use, and the points a sweep may have bound them
/// anyway; the limit keeps a typo like `range(0, 1e12)` from filling memory.
inline constexpr size_t kMaxListLength = 100000;

/// Looks a name up; nullopt means "not mine", so it becomes a symbol.
using NameLookup = std::function<std::optional<Value>(const ast::NameExpr &)>;

/// Evaluates expressions to Values, reporting problems once and returning
/// error values so that one mistake does not cascade.
class Evaluator {
public:
  Evaluator(DiagnosticEngine &diags, NameLookup lookup) : diags(diags), lookup(std::move(lookup)) {}
  Value eval(const ast::Expr &e);
  /// Names offered in "did you mean" when an unknown name is used in
  /// arithmetic; listed only then (a record's every field, per field
  /// evaluated, was most of a large sweep's resolution).
  std::function<std::vector<std::string_view>()> knownNames;

private:
  Value number(const ast::NumberExpr &e);
  Value name(const ast::NameExpr &e);
  Value call(const ast::CallExpr &e);
  Value unary(const ast::UnaryExpr &e);
  Value binary(const ast::BinaryExpr &e);
  Value apply(const ast::BinaryExpr &e, const Value &l, const Value &r);
  Value range(const ast::RangeExpr &e);
  bool needNumber(const Value &v, llvm::SMRange r);
  Value arithmetic(const ast::BinaryExpr &e, const Value &l, const Value &r);
  Value finite(Value v);
  Value compare(const ast::BinaryExpr &e, const Value &l, const Value &r);
  std::vector<Value> numericArgs(const ast::CallExpr &e, size_t min, size_t max);
  DiagnosticEngine &diags;
  NameLookup lookup;
};

/// Checks a value against the field's type, unit and bound. `written` is the
/// expression it came from (for unit suggestions), or null for defaults, in
/// which case problems are reported at `fallback`.
Value checkField(const FieldSpec &spec, Value v, const ast::Expr *written, llvm::SMRange fallback,
                 DiagnosticEngine &diags);

class Sema;

/// The fields of one record under a set of overrides (sweep values), evaluated
/// lazily, each once, with defaults in the record's own scope.
class RecordScope {
public:
  RecordScope(Sema &sema, const KindSchema &schema, const Bindings &fields,
              const std::set<std::string, std::less<>> *sections, const FieldValues *overrides,
              std::string owner, llvm::SMRange ownerRange);
  /// The value of a field, or an error value (already reported).
  Value get(const FieldSpec &spec);
  /// Every active field, evaluated.
  FieldValues all();
  /// Resolves a name used inside an expression of this record.
  std::optional<Value> lookup(const ast::NameExpr &e);
  bool active(const FieldSpec &spec) const;
  bool isSet(const FieldSpec &spec) const;
  /// Without a value or default, an error (a field not optional, save
  /// `model` in an experiment with a replay section).
  bool required(const FieldSpec &spec) const;
  /// Lets `base.PATH` read the value a derived declaration inherits.
  void setBase(const Record *b) { base = b; }

private:
  Sema &sema;
  const KindSchema &schema;
  const Bindings &fields;
  const std::set<std::string, std::less<>> *sections;
  const FieldValues *overrides;
  std::string owner; ///< "model 'llama3_70b'" for messages
  llvm::SMRange ownerRange; ///< where problems without a value of their own are reported
  FieldValues cache;
  std::set<std::string> inProgress;
  const Record *base = nullptr;
  std::unique_ptr<RecordScope> baseScope;
};

class Sema {
public:
  /// `--set flaky.fast(0,1).derate=25 %`: a field of one link fault.
  struct LinkOverride {
    std::string dim;
    int64_t a, b;
    ast::StmtPtr stmt;
  };

  Sema(const SemaOptions &opts, DiagnosticEngine &diags) : diags(diags), opts(opts) {}
  std::optional<Program> run(const std::string &file);
  /// Loads `imports` and resolves the declaration `name` of `kind` alone.
  std::optional<FieldValues> resolveNamed(const std::string &kind, const std::string &name,
                                          const std::vector<std::string> &imports);

  DiagnosticEngine &diags;
  const ast::Decl *findDecl(const std::string &name) const;
  /// "model 'llama3_70b'": how messages name a record.
  std::string noun(const Record &r) const;
  const Record *record(const std::string &name) const;
  /// A parsed default expression for a schema field (cached, parsed once).
  const ast::Expr *defaultExpr(const FieldSpec &spec);

  // Resolve.cpp: one experiment (with sweep overrides) to a point.
  ExperimentPoint resolvePoint(const Record &exp, const FieldValues &overrides);
  FieldValues resolveFields(const Record &r, const FieldValues *overrides);
  /// The defaults of `kind`'s table, as a declaration that writes nothing
  /// would have them; `owner` names it in messages about `overrides`.
  FieldValues defaultFields(std::string_view kind, const FieldValues *overrides, std::string owner,
                            llvm::SMRange at);
  const Record *resolveRef(const Value &v, std::string_view kind);
  TopologySpec resolveTopology(const Record &r, const FieldValues *overrides);
  FaultsSpec resolveFaults(const Record &r);
  // DimChecks.cpp: rules between a dimension's fields, its kind and size.
  void checkAlgorithm(const DimensionSpec &d, const Record::Dim &written);
  /// `t`: the topology with the dimensions before `d`.
  void checkSameNode(const DimensionSpec &d, const Record::Dim &written, const TopologySpec &t);
  void checkMulticast(const DimensionSpec &d, const Record::Dim &written, const TopologySpec &t);
  /// The fat-tree fields shape a FatTree and nothing else; its leaves, pods
  /// and trunks must fit together.
  void checkFatTreeFields(const DimensionSpec &dim, const Record::Dim &written);
  // Checks.cpp: feasibility problems of a resolved point.
  struct Problem {
    std::string message;
    llvm::SMRange range;
  };
  std::vector<Problem> check(const ExperimentPoint &p, const Record &exp);
  // Sweep.cpp
  void expandSweep(const ast::Decl &sweep, std::vector<ExperimentPoint> &out);

private:
  // Loader.cpp
  bool load(const std::string &path, llvm::SMRange from, std::vector<std::string> &stack);
  bool loadBuffer(std::unique_ptr<llvm::MemoryBuffer> buf, const std::string &path, const std::string &key,
                  llvm::SMRange from, std::vector<std::string> &stack);
  std::string findImport(const ast::Import &imp, const std::string &fromFile);
  // Declare.cpp
  void declare();
  void buildRecord(const ast::Decl &d);
  using Seen = std::map<std::string, llvm::SMRange>;
  void addBody(Record &r, const ast::Block &b, const std::string &prefix, Seen &seen);
  void addDim(Record &r, const ast::DimStmt &s);
  /// One `field = value;` of a dimension; `prefix` ("nvlink.") is what a
  /// `--set` writes before the field.
  void bindDimField(Record::Dim &dim, const ast::AssignStmt &a, const std::string &prefix, Seen &seen);
  /// A `--set` for declaration `r`: a field of its own, or of one of its
  /// dimensions (`nvlink.bandwidth`) or random fault sections (`flaky_link.samples`).
  void bindOverride(Record &r, const ast::AssignStmt &a, Seen &seen);
  void bindLinkOverride(Record &r, const LinkOverride &o);
  void bind(Bindings &fields, const KindSchema &schema, const std::string &owner, const ast::AssignStmt &s,
            const std::string &prefix, Seen &seen, std::set<std::string, std::less<>> *sections = nullptr, size_t strip = 0);
  void applyOverrides();
  void checkAllDecls();
  void runExperiment(const ast::Decl &d, std::vector<ExperimentPoint> &out);

  const SemaOptions &opts;
  std::vector<std::unique_ptr<ast::Module>> modules;
  std::map<std::string, const ast::Module *> loaded; ///< by real path
  std::map<std::string, const ast::Decl *> decls;
  std::map<std::string, Record> records;
  std::map<std::string, std::vector<ast::StmtPtr>> overrideStmts; ///< by decl name
  std::map<std::string, std::vector<LinkOverride>> linkOverrides; ///< by decl name
  std::map<const FieldSpec *, ast::StmtPtr> defaults;
  std::vector<const ast::Decl *> building; ///< derivation chain being built, for cycles
  /// Declarations whose chain was too deep: not tried again, so a long chain
  /// costs one attempt and one error, not one per declaration in it.
  std::set<const ast::Decl *> tooDeep;
  const ast::Module *root = nullptr;
  friend class RecordScope;
};

} // namespace rapid::sema
