#!/usr/bin/env python3
"""cli_expect.py STATUS TEXT -- COMMAND...: runs COMMAND and passes only if it exits with exactly
STATUS (a crash, a signal or an internal error, status 2, never passes for a user error) and its
standard error contains TEXT. Used by the cli/ tests of tests/CMakeLists.txt instead of a ctest
PASS_REGULAR_EXPRESSION, which ignores the exit status."""
import subprocess
import sys


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        sys.stderr.write("usage: cli_expect.py STATUS TEXT -- COMMAND...\n")
        return 2
    status, text, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[4:]
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    except subprocess.TimeoutExpired:
        print("FAIL: timed out: " + " ".join(cmd))
        return 1
    err = proc.stderr.decode("utf-8", "replace")
    if proc.returncode != status:
        print("FAIL: exit status %d, expected %d: %s\n%s" % (proc.returncode, status, " ".join(cmd), err))
        return 1
    if text not in err:
        print("FAIL: standard error lacks %r: %s\n%s" % (text, " ".join(cmd), err))
        return 1
    print("PASS: " + " ".join(cmd))
    return 0


if __name__ == "__main__":
    sys.exit(main())
