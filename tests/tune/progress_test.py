#!/usr/bin/env python3
"""spl-tune's progress and its errors (issue 23): on a terminal the bar is redrawn in place and
an error starts on a line of its own, not over the bar; without a terminal (a log) there is one
line per step and no carriage return. Each case exits 1 with its error.
Usage: progress_test.py SPL_TUNE SPLC BUILD_DIR SOURCE.spl EXPORT GOOD.mtx BAD.mtx"""
import os
import pty
import subprocess
import sys

tune, splc, build, source, export, good, bad = sys.argv[1:8]
base = [sys.executable, tune, source, "--export", export, "--splc", splc, "--build-dir", build, "--runs", "1",
        "--only", "R=1,4", "--only", "S=1"]


def on_terminal(args):
    """Runs args with stdout and stderr on a pseudo-terminal; returns (exit code, output)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(args[0], args)
    chunks = []
    while True:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode(errors="replace")


def expect(cond, what, text):
    if not cond:
        sys.stderr.write("FAILED: %s\n--- output ---\n%r\n" % (what, text))
        sys.exit(1)


# A kernel that does not link (a library that does not exist) fails while the bar is drawn.
code, out = on_terminal(base + ["--matrix", good, "--ldflags=-lspl_no_such_library"])
expect(code == 1, "exit status 1 for a kernel that does not link", out)
expect("\r[" in out, "the bar is drawn in place on a terminal", out)
expect("\r\nspl-tune: error: the kernel of" in out or out.startswith("spl-tune: error: the kernel of"),
       "the link error starts a line of its own, not over the bar", out)

# A malformed matrix fails while the bar shows that matrix.
code, out = on_terminal(base + ["--matrix", good, "--matrix", bad])
expect(code == 1, "exit status 1 for a malformed matrix", out)
expect("\r\nspl-tune: error: on %s: " % bad in out, "the matrix error starts a line of its own", out)

# Without a terminal: one line per step, no carriage return.
r = subprocess.run(base + ["--matrix", good, "--matrix", bad], capture_output=True, text=True)
expect(r.returncode == 1, "exit status 1 without a terminal", r.stderr)
expect("\r" not in r.stderr, "no carriage return in a log", r.stderr)
expect("] 0/4 compiling" in r.stderr and "\nspl-tune: error: on %s: " % bad in r.stderr,
       "a line per step, then the error on its own line", r.stderr)
print("ok")
