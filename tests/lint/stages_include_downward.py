#!/usr/bin/env python3
"""Data flows one way (issue 24, item 5): a stage of compiler/ includes only the stages before it
in the pipeline ast -> parse -> types -> tir -> check -> cin -> poly -> loopir -> codegen -> driver,
and support (below them all). types/ is the type language (nats, types), which the typed IR
(tir/) is built on; the type checker (check/) reads the AST and produces that IR, so it comes
after both. No exception. Usage: stages_include_downward.py SRC"""
import os
import re
import sys

order = ["support", "ast", "parse", "types", "tir", "check", "cin", "poly", "loopir", "codegen", "driver"]
allowed_up = set()
root = os.path.join(sys.argv[1], "compiler")
include = re.compile(r'^\s*#include\s+"([a-z]+)/([A-Za-z0-9_./]+)"', re.M)
found = []
for stage in order:
    folder = os.path.join(root, stage)
    if not os.path.isdir(folder):
        continue
    for d, _, files in os.walk(folder):
        for f in files:
            if not f.endswith((".cpp", ".h")):
                continue
            path = os.path.join(d, f)
            text = open(path, encoding="utf-8").read()
            for m in include.finditer(text):
                target = m.group(1)
                if target not in order or target == stage:
                    continue
                if order.index(target) > order.index(stage) and (stage, target + "/" + m.group(2)) not in allowed_up:
                    found.append("%s:%d: %s includes %s/%s, a later stage" % (os.path.relpath(path, sys.argv[1]),
                                 text.count("\n", 0, m.start()) + 1, stage, target, m.group(2)))
if found:
    print("includes against the pipeline:\n  " + "\n  ".join(found))
    sys.exit(1)
print("ok: every stage includes only earlier stages")
