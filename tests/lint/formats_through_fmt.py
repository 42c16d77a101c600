#!/usr/bin/env python3
"""The compiler formats text one way, through fmt (issue 24, item 9): no string streams and no
printf family in compiler/ (support/Format.h's TextOut and fmt::format instead). One exception,
named here: poly/IslSupport.cpp prints isl objects through the operator<< that isl's C++
bindings give (the alternative, isl_*_to_str, hands back a string to free by hand).
A name in a string literal (check/CNames.cpp lists the C library's functions) is not a use.
Messages too: no std::to_string inside a diagnostic or error (fail, error, note, CompileError,
NotSupported, InternalError, ...): fmt::format("... {} ...", x). (std::to_string still builds
names and keys, such as isl's dimension names.)
Usage: formats_through_fmt.py SRC"""
import os
import re
import sys

allowed = {"poly/IslSupport.cpp": {"std::ostringstream"}}
root = os.path.join(sys.argv[1], "compiler")
banned = re.compile(r"\b(std::(?:o|i)?stringstream|s?n?printf)\b")
message_calls = re.compile(r"\b(fail|error|note|warning|CompileError|NotSupported|InternalError)\(")
strings = re.compile(r'"(?:[^"\\]|\\.)*"')
bad = []


def calls_with_to_string(text):
    """The line numbers of message calls whose arguments (up to the closing parenthesis) use
    std::to_string."""
    found = []
    for m in message_calls.finditer(text):
        depth, i = 0, m.end() - 1
        while i < len(text):
            c = text[i]
            if c == '"':
                i += 1
                while i < len(text) and text[i] != '"':
                    i += 2 if text[i] == "\\" else 1
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        if "std::to_string" in text[m.end():i]:
            found.append(text.count("\n", 0, m.start()) + 1)
    return found


for dirpath, _, files in os.walk(root):
    for name in sorted(files):
        if not name.endswith((".cpp", ".h")):
            continue
        path = os.path.join(dirpath, name)
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for number in calls_with_to_string(text):
            bad.append(f"  compiler/{rel}:{number}: a message built with std::to_string (fmt::format it)")
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                code = strings.sub('""', line.split("//")[0])
                for m in banned.finditer(code):
                    if m.group(1) not in allowed.get(rel, set()):
                        bad.append(f"  compiler/{rel}:{number}: {m.group(1)} (format through fmt: support/Format.h)")
if bad:
    print("text formatted outside fmt:")
    print("\n".join(bad))
    sys.exit(1)
print("compiler/ formats through fmt")
