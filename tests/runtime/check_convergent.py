#!/usr/bin/env python3
"""Checks an NVVM IR file: every function that reaches a warp or block synchronisation (a
shfl.sync, vote.sync, bar.warp.sync or barrier intrinsic), directly or through the functions it
calls, carries the `convergent` attribute, so that the optimiser cannot make which copy of the
synchronisation a thread reaches depend on more than the source does (issue 21: without it,
opt -O3 copied the Sigma scan's helpers into thread-dependent branches and the scan hung).

usage: check_convergent.py FILE.ll      exit 0 when it holds, 1 (and the offenders) otherwise
"""
import re
import sys

text = open(sys.argv[1]).read()
groups = {m.group(1): m.group(2) for m in re.finditer(r"^attributes #(\d+) = \{([^}]*)\}", text, re.M)}
functions = {}  # name -> (attributes text, body)
for m in re.finditer(r"^define ([^@]*)@([\w.$]+)\(([^)]*)\)([^{]*)\{(.*?)^\}", text, re.M | re.S):
    functions[m.group(2)] = (m.group(1) + m.group(4), m.group(5))
SYNC = re.compile(r"@llvm\.nvvm\.(shfl\.sync|vote\.|bar\.warp\.sync|barrier)")


def convergent(attrs):
    if "convergent" in attrs:
        return True
    return any("convergent" in groups.get(g, "") for g in re.findall(r"#(\d+)", attrs))


syncing = {name for name, (_, body) in functions.items() if SYNC.search(body)}
changed = True
while changed:
    changed = False
    for name, (_, body) in functions.items():
        if name in syncing:
            continue
        if any(re.search(r"@" + re.escape(callee) + r"\(", body) for callee in syncing):
            syncing.add(name)
            changed = True
bad = [n for n in sorted(syncing) if "ptx_kernel" not in functions[n][0] and not convergent(functions[n][0])]
if bad:
    print("%s: not convergent but synchronise: %s" % (sys.argv[1], ", ".join(bad)))
    sys.exit(1)
print("%s: %d synchronising helpers, all convergent" % (sys.argv[1], len([n for n in syncing if "ptx_kernel" not in functions[n][0]])))
