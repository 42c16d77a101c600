#!/usr/bin/env python3
"""cli_expect.py [--stdout] [--regex] STATUS TEXT -- COMMAND...: runs COMMAND and passes only if
it exits with exactly STATUS (a crash, a signal or an internal error, status 2, never passes for
a user error or for a success) and its standard error (--stdout: its standard output) contains
TEXT (--regex: matches the Python regular expression TEXT, `.` matching newlines too). Used by
tests instead of a ctest PASS_REGULAR_EXPRESSION or WILL_FAIL, which ignore the exit status."""
import re
import subprocess
import sys


def main():
    args = sys.argv[1:]
    stream, regex = "stderr", False
    while args and args[0].startswith("--") and args[0] != "--":
        if args[0] == "--stdout":
            stream = "stdout"
        elif args[0] == "--regex":
            regex = True
        else:
            break
        args = args[1:]
    if len(args) < 4 or args[2] != "--":
        sys.stderr.write("usage: cli_expect.py [--stdout] [--regex] STATUS TEXT -- COMMAND...\n")
        return 2
    status, text, cmd = int(args[0]), args[1], args[3:]
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    except subprocess.TimeoutExpired:
        print("FAIL: timed out: " + " ".join(cmd))
        return 1
    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")
    if proc.returncode != status:
        print("FAIL: exit status %d, expected %d: %s\n%s%s" % (proc.returncode, status, " ".join(cmd), out, err))
        return 1
    checked = out if stream == "stdout" else err
    found = re.search(text, checked, re.S) if regex else text in checked
    if not found:
        print("FAIL: standard %s lacks %s%r: %s\n%s" % ("output" if stream == "stdout" else "error",
                                                         "a match of " if regex else "", text, " ".join(cmd), checked))
        return 1
    print("PASS: " + " ".join(cmd))
    return 0


if __name__ == "__main__":
    sys.exit(main())
