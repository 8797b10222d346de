// The .rapid experiment language. Keep this file ASCII: ANTLR counts columns
// in code points and our diagnostics count bytes.
//
// The grammar is deliberately generic about fields: a body is a list of
// assignments and nested sections, and Sema checks every field name and unit
// against the schema of the declaration kind. That keeps parse errors about
// syntax and gives semantic errors "did you mean" suggestions.
grammar Rapid;

file        : item* EOF ;
// Entry points for text that is not a file: `--set NAME=VALUE`.
stmtOnly    : stmt EOF ;
item        : importDecl | decl ;

importDecl  : 'import' (dotted=qualifiedName | filePath=STRING) ';' ;
qualifiedName : ID ('.' ID)* ;

// `gpu a100_big : a100_sxm_80gb { ... }`, `sweep s over exp { ... }`,
// `model m = hf("config.json");` (fields from a file, then the block's).
decl        : kind=ID name=(ID | 'x')
              ( (':' base=(ID | 'x'))? ('over' target=(ID | 'x'))? block
              | '=' source=call (block | ';') ) ;

block       : '{' stmt* '}' ;

stmt        : path '=' expr (',' expr)* ';'                       # assignStmt
            | path 'in' expr ';'                                  # axisStmt
            | 'where' expr ';'                                    # whereStmt
            | 'map' ids+=(ID | 'x') (',' ids+=(ID | 'x'))* '->' dims+=(ID | 'x') (',' dims+=(ID | 'x'))* ';' # mapStmt
            | 'dim' name=(ID | 'x') ':' call (block | ';')         # dimStmt
            | severity=('soft' | 'hard') dim=(ID | 'x') '(' a=expr ',' b=expr ')' (block | ';') # linkFaultStmt
            | kind=ID name=(ID | 'x')? block                       # sectionStmt
            ;

// 'x' joins a shape's extents (`4 x 4`) and is a name everywhere else.
path        : parts+=(ID | 'x') ('.' parts+=(ID | 'x'))* ;

expr        : op=('-' | '!') expr                                 # unaryExpr
            | lhs=expr op=('*' | '/') rhs=expr               # binaryExpr
            | lhs=expr op=('+' | '-') rhs=expr                     # binaryExpr
            | lhs=expr op=('<' | '<=' | '>' | '>=') rhs=expr       # binaryExpr
            | lhs=expr op=('==' | '!=') rhs=expr                   # binaryExpr
            | lhs=expr op='&&' rhs=expr                            # binaryExpr
            | lhs=expr op='||' rhs=expr                            # binaryExpr
            | lo=expr '..' hi=expr                                 # rangeExpr
            | primary                                             # primaryExpr
            ;

primary     : quantity                                            # quantityPrimary
            | call                                                # callPrimary
            | path                                                # namePrimary
            | STRING                                              # stringPrimary
            | '[' (expr (',' expr)*)? ']'                         # listPrimary
            | '(' expr ')'                                        # parenPrimary
            ;

// `4096`, `80 GiB`, `100 GB/s`, `73 %`, `312 TFLOP/s`. A number followed
// by a name is always a quantity: nothing else may follow a number.
quantity    : NUMBER unit? ;
unit        : num=unitAtom ('/' den=unitAtom)? ;
unitAtom    : ID | '%' ;

call        : callee=ID '(' (arg (',' arg)*)? ')' ;
arg         : (key=(ID | 'x') '=')? shape ;
// `Torus2D(4 x 4)`: a shape is one or more extents joined by 'x'.
shape       : expr ('x' expr)* ;

NUMBER      : DIGITS ('.' DIGITS)? ([eE] [+-]? DIGITS)? ;
fragment DIGITS : [0-9] ('_'? [0-9])* ;
// A name may also start with digits when letters and a digit follow, so that
// `1f1b` is a name while `80GiB` and `1e5` stay numbers.
ID          : [a-zA-Z_] [a-zA-Z_0-9]*
            | [0-9]+ [a-zA-Z]+ [0-9] [a-zA-Z_0-9]* ;
STRING      : '"' (~["\\\r\n] | '\\' .)* '"' ;

LINE_COMMENT  : '//' ~[\r\n]* -> skip ;
BLOCK_COMMENT : '/*' .*? '*/' -> skip ;
WS          : [ \t\r\n]+ -> skip ;
