// Spl.g4: the concrete syntax of SPL (../shared/spec/LANGUAGE.md, sections 1-10).
//
// The parser only builds a parse tree; compiler/parse/AstBuilder.cpp turns it into the AST and
// compiler/parse/Parser.cpp reports lexical errors (stray bytes, unterminated comments) and
// syntax errors as located diagnostics. Precedence follows section 4 of the contract, tightest
// first: application; `@` and `.0`; unary `-` `!`; `* / %`; `+ -`; comparisons; `&&`; `||`;
// `|>`; `:`. Lambda, `let` and `if` bodies extend as far right as possible.
grammar Spl;

// ---------------------------------------------------------------------------------------------
// Declarations
// ---------------------------------------------------------------------------------------------

program : decl* EOF ;

decl
  : importDecl
  | typeDecl
  | defDecl
  | exportDecl
  | tunableDecl
  | scheduleDecl
  ;

importDecl : 'import' ID ('.' ID)* ';' ;

typeDecl : 'type' ID ('[' kindedName (',' kindedName)* ']')? '=' dataType ';' ;

kindedName : ID ':' kind ;

kind : 'nat' | 'nats' | 'data' ;

defDecl : 'def' ID param* (':' dataType)? '=' expr ';' ;

param
  : '{' name ':' paramSort '}'      # implicitParam
  | '(' name ':' paramSort ')'      # explicitParam
  ;

paramSort : kind | dataType ;

exportDecl
  : 'export' ID ('(' exportArg (',' exportArg)* ')')? 'as' ID ('for' ID (',' ID)*)? exportWith? ';' ;

exportArg : ID '=' typeArg ;

// `with x: inc(incx), A: colmajor(lda), result in y`: how the caller stores array parameters
// and where the result goes. `with` and `result` are words only here (AstBuilder checks them),
// so programs that name a parameter `with` or `result` keep compiling.
exportWith : ID exportStorage (',' exportStorage)* ;

exportStorage
  : ID ':' ID '(' ID ')'                         # storageView
  | ID 'in' (ID | '(' ID (',' ID)* ')')          # storageResultIn
  ;

tunableDecl
  : 'tunable' ID ':' 'nat' '=' natExpr ('in' tunableRange)? ';' ;

tunableRange
  : '[' natExpr (',' natExpr)* ']'  # tunableList
  | natExpr '..' natExpr            # tunableInterval
  ;

scheduleDecl : 'schedule' ID (',' ID)* 'for' ID '{' scheduleCmd* '}' ;

// A command ends with `;`; specialize(cond) takes a block of commands instead.
scheduleCmd : ID '(' (expr (',' expr)*)? ')' (';' | block='{' scheduleCmd* '}') ;

// ---------------------------------------------------------------------------------------------
// Types and type-level naturals
// ---------------------------------------------------------------------------------------------

dataType
  : natAtom '.' dataType                                  # arrayType
  | natAtom DOT_INT+ '.' dataType                         # dotIntArrayType  // n.2.f32 lexes .2 as one token
  | FLOAT DOT_INT* '.' dataType                           # floatArrayType   // 2.3.f32 lexes 2.3 as one token
  | natAtom '..' '(' ID '=>' dataType ')'                 # depArrayType
  | 'packed' natAtom '.' dataType                         # packedArrayType
  | '(' ID ':' kw=('nat' | 'nats') '**' dataType ')'      # depPairType
  | '(' dataType (',' dataType)+ ')'                      # tupleType
  | '(' dataType ')'                                      # parenType
  | ID ('[' typeArg (',' typeArg)* ']')?                  # namedType
  ;

// An alias or export argument: a nat or a data type, told apart by the declared kind.
typeArg : dataType | natExpr ;

// Array lengths are atoms: compound lengths are parenthesised, `(n+1).i32`.
natAtom
  : INT                                                   # natLit
  | 'toNat' '(' expr ')'                                  # natToNat
  | ID '(' natExpr (',' natExpr)* ')'                     # natCall        // min(a, b), max(a, b)
  | name '@' natAtom                                      # natLookup
  | name                                                  # natVar
  | '(' natExpr ')'                                       # natParen
  ;

natExpr
  : natExpr op=('*' | '/' | '%') natExpr                  # natMul
  | natExpr op=('+' | '-') natExpr                        # natAdd
  | natExpr op=('==' | '!=' | '<' | '<=' | '>' | '>=') natExpr  # natCmp
  | natExpr '&&' natExpr                                  # natAnd
  | natExpr '||' natExpr                                  # natOr
  | '!' natExpr                                           # natNot
  | <assoc=right> natExpr '?' natExpr ':' natExpr         # natCond
  | 'sum' '(' ID '=' natExpr '..' natExpr ')' natExpr     # natSum
  | natAtom                                               # natAtomExpr
  ;

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

expr
  : expr '(' args? ')'                                    # callExpr
  | expr DOT_INT                                          # projExpr
  | expr op='@' indexOperand                              # indexExpr
  | op=('-' | '!') expr                                   # unaryExpr
  | expr op=('*' | '/' | '%') expr                        # mulExpr
  | expr op=('+' | '-') expr                              # addExpr
  | expr op=('==' | '!=' | '<' | '<=' | '>' | '>=') expr  # cmpExpr
  | expr op='&&' expr                                     # andExpr
  | expr op='||' expr                                     # orExpr
  | expr op='|>' expr                                     # pipeExpr
  | expr op=':' dataType                                  # annotExpr
  | pattern '=>' expr                                     # lambdaExpr
  | 'let' pattern '=' expr ';' expr                       # letExpr
  | 'if' expr 'then' expr 'else' expr                     # ifExpr
  | 'einsum' einsumAccess '=' einsumExpr                  # einsumExpr_
  | '(' expr (',' expr)+ ')'                              # tupleExpr
  | '(' expr ')'                                          # parenExpr
  | literal                                               # literalExpr
  | name                                                  # varExpr
  ;

// The right side of `@` binds like an application operand: a@f(x) is a@(f(x)), a@i.0 is (a@i).0.
indexOperand
  : indexOperand op='(' args? ')'                         # indexCall
  | '(' expr (',' expr)+ ')'                              # indexTuple
  | '(' expr ')'                                          # indexParen
  | literal                                               # indexLiteral
  | name                                                  # indexVar
  ;

args : arg (',' arg)* ;

// An operator token passed as a function means (a, b) => a op b: reduce(+, 0.0).
arg
  : expr                                                  # exprArg
  | op=('+' | '-' | '*' | '/' | '%' | '&&' | '||' | '==' | '!=' | '<' | '<=' | '>' | '>=') # opArg
  ;

pattern
  : name                                                  # namePattern
  | '(' pattern (',' pattern)+ ')'                        # tuplePattern
  ;

literal
  : INT                                                   # intLit
  | FLOAT                                                 # floatLit
  | ('true' | 'false')                                    # boolLit
  ;

einsumAccess : name ('[' name (',' name)* ']')? ;

// `data` is a keyword only where a kind is expected; the contract's examples name values `data`.
name : ID | 'data' ;

einsumExpr
  : einsumExpr op=('*' | '/') einsumExpr                  # einMul
  | einsumExpr op=('+' | '-') einsumExpr                  # einAdd
  | '-' einsumExpr                                        # einNeg
  | '(' einsumExpr ')'                                    # einParen
  | literal                                               # einLit
  | einsumAccess                                          # einAccess
  ;

// ---------------------------------------------------------------------------------------------
// Lexer
// ---------------------------------------------------------------------------------------------

ID      : [A-Za-z_] [A-Za-z0-9_]* ;
DOT_INT : '.' [0-9]+ ;                                    // tuple projection: p.0.1
FLOAT   : [0-9]+ '.' [0-9]+ ([eE] [+-]? [0-9]+)?
        | [0-9]+ [eE] [+-]? [0-9]+ ;
INT     : [0-9]+ ;

LINE_COMMENT  : '//' ~[\r\n]* -> skip ;
// An unterminated block comment runs to EOF; Parser.cpp reports it at its `/*`.
BLOCK_COMMENT : '/*' .*? ('*/' | EOF) -> channel(HIDDEN) ;
WS            : [ \t\r\n\f]+ -> skip ;

// Anything else is a stray byte, reported by Parser.cpp rather than silently dropped.
STRAY : . ;
