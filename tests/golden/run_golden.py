#!/usr/bin/env python3
"""FileCheck-style golden tests: runs each `// RUN:` line of a test file through the shell with
%s = the test file, %splc = splc --verify-each (every IR verified after every pass), %FileCheck =
FileCheck, and fails if any command fails.
Usage: run_golden.py SPLC FILECHECK TEST.spl"""
import os
import re
import subprocess
import sys

splc, filecheck, test = sys.argv[1], sys.argv[2], sys.argv[3]
runs = []
with open(test, encoding="utf-8") as f:
    for line in f:
        m = re.match(r"\s*//\s*RUN:\s*(.*)$", line)
        if m:
            runs.append(m.group(1))
if not runs:
    print(f"{test}: no RUN lines")
    sys.exit(1)
for cmd in runs:
    cmd = cmd.replace("%splc", splc + " --verify-each").replace("%FileCheck", filecheck).replace("%s", test)
    print("RUN:", cmd)
    r = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=os.path.dirname(test))
    if r.returncode != 0:
        print(f"FAILED (exit {r.returncode}): {cmd}")
        sys.exit(1)
print("ok")
