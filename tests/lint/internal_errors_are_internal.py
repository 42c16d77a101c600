#!/usr/bin/env python3
"""A compiler bug is reported as one (issue 24, item 6): no user error (CompileError,
user_error_at) or unsupported feature (NotSupported, not_supported) in compiler/ may carry a
message that calls itself internal; those are internal_error / internal_error_at (InternalError:
exit status 2 with "internal compiler error" and where). Usage: internal_errors_are_internal.py SRC"""
import os
import re
import sys

root = os.path.join(sys.argv[1], "compiler")
user = re.compile(r'(CompileError\s*\(|NotSupported\s*\(|user_error_at\s*\(|not_supported\s*\()[^;]*?"\s*internal', re.S)
found = []
for d, _, files in os.walk(root):
    for f in files:
        if not f.endswith((".cpp", ".h")):
            continue
        path = os.path.join(d, f)
        text = open(path, encoding="utf-8").read()
        for m in user.finditer(text):
            found.append("%s:%d: %s" % (os.path.relpath(path, sys.argv[1]), text.count("\n", 0, m.start()) + 1,
                                         m.group(0).splitlines()[0].strip()))
if found:
    print("internal errors reported as user errors:\n  " + "\n  ".join(found))
    sys.exit(1)
print("ok: no user error calls itself internal")
