/// \file CNames.cpp: the names an export may not take (see the header).
#include "check/CNames.h"

#include <cctype>
#include <set>

namespace spl::types {
namespace {

const std::set<std::string> &keywords() {
  static const std::set<std::string> k = {
      // C17 and C23
      "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
      "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
      "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "alignas",
      "alignof", "bool", "constexpr", "false", "nullptr", "static_assert", "thread_local", "true", "typeof",
      "typeof_unqual",
      // C++ (the header is included from C++ too)
      "and", "and_eq", "asm", "bitand", "bitor", "catch", "char8_t", "char16_t", "char32_t", "class", "compl",
      "concept", "consteval", "constinit", "const_cast", "co_await", "co_return", "co_yield", "decltype", "delete",
      "dynamic_cast", "explicit", "export", "friend", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "operator", "or", "or_eq", "private", "protected", "public", "reinterpret_cast", "requires", "static_cast",
      "template", "this", "throw", "try", "typeid", "typename", "using", "virtual", "wchar_t", "xor", "xor_eq"};
  return k;
}

/// The C library's functions and objects a program commonly links (C17 7.x, and POSIX's I/O,
/// threads and memory): an external function of that name would take their place.
const std::set<std::string> &libraryNames() {
  static const std::set<std::string> k = {
      // stdlib.h
      "abort", "abs", "aligned_alloc", "atexit", "atof", "atoi", "atol", "atoll", "at_quick_exit", "bsearch", "calloc",
      "div", "exit", "free", "getenv", "labs", "ldiv", "llabs", "lldiv", "malloc", "mblen", "mbstowcs", "mbtowc",
      "qsort", "quick_exit", "rand", "realloc", "srand", "strtod", "strtof", "strtol", "strtold", "strtoll", "strtoul",
      "strtoull", "system", "wcstombs", "wctomb", "_Exit", "posix_memalign", "setenv", "unsetenv", "putenv",
      // string.h
      "memchr", "memcmp", "memcpy", "memmove", "memset", "strcat", "strchr", "strcmp", "strcoll", "strcpy", "strcspn",
      "strerror", "strlen", "strncat", "strncmp", "strncpy", "strpbrk", "strrchr", "strspn", "strstr", "strtok",
      "strxfrm", "strdup", "strndup",
      // stdio.h
      "clearerr", "fclose", "feof", "ferror", "fflush", "fgetc", "fgetpos", "fgets", "fopen", "fprintf", "fputc",
      "fputs", "fread", "freopen", "fscanf", "fseek", "fsetpos", "ftell", "fwrite", "getc", "getchar", "perror",
      "printf", "putc", "putchar", "puts", "remove", "rename", "rewind", "scanf", "setbuf", "setvbuf", "snprintf",
      "sprintf", "sscanf", "tmpfile", "tmpnam", "ungetc", "vfprintf", "vprintf", "vsnprintf", "vsprintf", "stdin",
      "stdout", "stderr", "fileno", "fdopen", "popen", "pclose",
      // math.h (double, float and long double forms)
      "acos", "asin", "atan", "atan2", "cbrt", "ceil", "copysign", "cos", "cosh", "erf", "erfc", "exp", "exp2",
      "expm1", "fabs", "fdim", "floor", "fma", "fmax", "fmin", "fmod", "frexp", "hypot", "ilogb", "ldexp", "lgamma",
      "llrint", "llround", "log", "log10", "log1p", "log2", "logb", "lrint", "lround", "modf", "nan", "nearbyint",
      "nextafter", "pow", "remainder", "remquo", "rint", "round", "scalbn", "sin", "sinh", "sqrt", "tan", "tanh",
      "tgamma", "trunc", "sqrtf", "sinf", "cosf", "expf", "logf", "powf", "fabsf", "floorf", "ceilf", "fmaf",
      "sqrtl", "fabsl",
      // time.h, signal.h, setjmp.h, errno.h, locale.h, ctype.h
      "asctime", "clock", "ctime", "difftime", "gmtime", "localtime", "mktime", "strftime", "time", "timespec_get",
      "signal", "raise", "setjmp", "longjmp", "errno", "setlocale", "localeconv", "isalnum", "isalpha", "isblank",
      "iscntrl", "isdigit", "isgraph", "islower", "isprint", "ispunct", "isspace", "isupper", "isxdigit", "tolower",
      "toupper",
      // POSIX I/O, processes, threads, memory
      "open", "close", "read", "write", "lseek", "pread", "pwrite", "fork", "execv", "execve", "execvp", "wait",
      "waitpid", "kill", "pipe", "dup", "dup2", "unlink", "mkdir", "rmdir", "chdir", "getcwd", "getpid", "sleep",
      "usleep", "nanosleep", "mmap", "munmap", "mprotect", "sysconf", "select", "poll", "socket", "connect", "bind",
      "listen", "accept", "send", "recv", "dlopen", "dlsym", "dlclose", "dlerror", "pthread_create", "pthread_join",
      "pthread_mutex_lock", "pthread_mutex_unlock", "pthread_self", "sched_yield", "environ"};
  return k;
}

bool isIdentifier(const std::string &s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

}  // namespace

std::optional<std::string> whyNotCName(const std::string &name) {
  if (!isIdentifier(name)) return "'" + name + "' is not a C identifier";
  if (keywords().count(name)) return "'" + name + "' is a C or C++ keyword";
  if (name[0] == '_')
    return "'" + name + "' is reserved by the C standard (identifiers that begin with an underscore, at file scope)";
  if (name == "main") return "'main' is the program's entry point";
  if (libraryNames().count(name))
    return "'" + name + "' is a C library function or object: a kernel of that name would replace it in the program";
  return std::nullopt;
}

}  // namespace spl::types
