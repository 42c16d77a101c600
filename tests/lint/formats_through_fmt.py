#!/usr/bin/env python3
"""The compiler formats text one way, through fmt (issue 24, item 9): no string streams and no
printf family in compiler/ (support/Format.h's TextOut and fmt::format instead). One exception,
named here: poly/IslSupport.cpp prints isl objects through the operator<< that isl's C++
bindings give (the alternative, isl_*_to_str, hands back a string to free by hand).
A name in a string literal (types/CNames.cpp lists the C library's functions) is not a use.
Usage: formats_through_fmt.py SRC"""
import os
import re
import sys

allowed = {"poly/IslSupport.cpp": {"std::ostringstream"}}
root = os.path.join(sys.argv[1], "compiler")
banned = re.compile(r"\b(std::(?:o|i)?stringstream|s?n?printf)\b")
strings = re.compile(r'"(?:[^"\\]|\\.)*"')
bad = []
for dirpath, _, files in os.walk(root):
    for name in sorted(files):
        if not name.endswith((".cpp", ".h")):
            continue
        path = os.path.join(dirpath, name)
        rel = os.path.relpath(path, root)
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
