#!/usr/bin/python3
"""Runs splc on one must-fail program and checks its diagnostics (Halide's test/error with
MLIR's -verify-diagnostics annotations).

Usage: run_error_test.py SPLC FILE.spl

Annotations, in `//` comments of FILE.spl:
  // expected-error@+1 {{substring}}       an error on the next line
  // expected-error@+0 {{substring}}       an error on this line (also @-N for earlier lines)
  // expected-error@+1:17 {{substring}}    ... and at column 17 (code points, 1-based)
  // expected-error@unknown {{substring}}  an error without a location ("splc: error: ...")
  // expected-note@+1 {{substring}}        a note that must be attached (other notes are fine)
  // RUN-FLAGS: -D R=3                     extra splc arguments (%S = this file's folder)

The test passes when splc exits with status exactly 1 (a signal, a crash, a timeout or
status 2, an internal compiler error, fails), every expected diagnostic appears as
`FILE:LINE:COL: error: MESSAGE` with MESSAGE containing the substring, followed by the source
line and a caret line whose caret sits at COL, and no `error:` appears beyond those expected.
Only the Python standard library is used.
"""

import os
import re
import shlex
import subprocess
import sys

ANNOTATION = re.compile(
    rb"expected-(error|note)@(?:([+-]\d+)|(unknown))(?::(\d+))?\s*\{\{(.*?)\}\}")
RUN_FLAGS = re.compile(rb"//\s*RUN-FLAGS:(.*)$")
TIMEOUT_S = 60


class Expected:
    def __init__(self, kind, line, col, text, where):
        self.kind = kind      # b"error" or b"note"
        self.line = line      # None for @unknown
        self.col = col        # None when not given
        self.text = text
        self.where = where    # annotation line, for messages

    def describe(self):
        loc = "unknown location" if self.line is None else "line %d%s" % (
            self.line, "" if self.col is None else ", column %d" % self.col)
        return "expected-%s at %s (annotation on line %d) {{%s}}" % (
            self.kind.decode(), loc, self.where, self.text.decode("utf-8", "replace"))


class Diag:
    def __init__(self, kind, line, col, text, raw):
        self.kind = kind
        self.line = line
        self.col = col
        self.text = text
        self.raw = raw
        self.used = False


def fail(msg, output=None):
    sys.stdout.write("FAIL: %s\n" % msg)
    if output is not None:
        sys.stdout.write("---- splc output ----\n")
        sys.stdout.write(output.decode("utf-8", "replace"))
        sys.stdout.write("---------------------\n")
    sys.exit(1)


def code_points(b):
    """Splits bytes into code points the way splc counts columns: a byte starts a code point
    unless it is a UTF-8 continuation byte (0b10xxxxxx)."""
    out = []
    for i in range(len(b)):
        if (b[i] & 0xC0) != 0x80 or not out:
            out.append(b[i:i + 1])
        else:
            out[-1] += b[i:i + 1]
    return out


def shown(line):
    """The source line as splc prints it: control bytes but tab become '?'."""
    return bytes(0x3F if (c < 0x20 and c != 0x09) or c == 0x7F else c for c in line)


def parse_annotations(lines):
    expected = []
    flags = []
    for idx, line in enumerate(lines):
        lineno = idx + 1
        m = RUN_FLAGS.search(line)
        if m:
            flags += shlex.split(m.group(1).decode("utf-8"))
        for a in ANNOTATION.finditer(line):
            kind, offset, unknown, col, text = a.groups()
            target = None if unknown else lineno + int(offset)
            if target is not None and not 1 <= target <= len(lines) + 1:
                fail("annotation on line %d points at line %d, outside the file" % (lineno, target))
            expected.append(Expected(kind, target, int(col) if col else None, text, lineno))
    return expected, flags


def check_source_and_caret(out_lines, i, lines, d, output):
    """out_lines[i] is a located diagnostic; the next two lines must show its source line and a
    caret under column d.col."""
    if i + 2 >= len(out_lines):
        fail("diagnostic without its source line and caret: %r" % d.raw, output)
    src = out_lines[i + 1]
    caret = out_lines[i + 2]
    if not re.fullmatch(rb"[ \t]*\^", caret):
        fail("no caret line after %r (found %r)" % (d.raw, caret), output)
    caret_idx = len(caret) - 1
    if d.line < 1 or d.line > len(lines):
        # A location just past the last line (a token at end of file) is fine with an empty line.
        if d.line == len(lines) + 1 and src == b"":
            return
        fail("diagnostic points at line %d, but the file has %d lines: %r" % (d.line, len(lines), d.raw), output)
    actual = lines[d.line - 1]
    if actual.endswith(b"\r"):
        actual = actual[:-1]
    actual_cps = code_points(shown(actual))
    if src == shown(actual):
        if caret_idx != d.col - 1:
            fail("the caret is at column %d, but the diagnostic says column %d: %r" % (caret_idx + 1, d.col, d.raw),
                 output)
        if d.col - 1 > len(actual_cps):
            fail("column %d is beyond the end of line %d: %r" % (d.col, d.line, d.raw), output)
        return
    # Long lines are shown as a window ("...text...") around the caret: the caret must still be
    # under the same character.
    if not (src.startswith(b"...") or src.endswith(b"...")):
        fail("the source line shown is not line %d of the file:\n  shown:  %r\n  actual: %r" % (d.line, src, actual),
             output)
    shown_cps = code_points(src)
    if d.col - 1 >= len(actual_cps) or caret_idx >= len(shown_cps):
        fail("caret or column out of range in a windowed line: %r" % d.raw, output)
    if shown_cps[caret_idx] != actual_cps[d.col - 1]:
        fail("the caret of a windowed line is under %r, but column %d holds %r: %r" %
             (shown_cps[caret_idx], d.col, actual_cps[d.col - 1], d.raw), output)


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: run_error_test.py SPLC FILE.spl\n")
        return 2
    splc, path = sys.argv[1], sys.argv[2]
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    expected, flags = parse_annotations(lines)
    if not any(e.kind == b"error" for e in expected):
        fail("%s has no expected-error annotation" % path)
    folder = os.path.dirname(os.path.abspath(path))
    flags = [f.replace("%S", folder) for f in flags]

    cmd = [splc, path, "--emit=types"] + flags
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        fail("splc did not finish within %d s: %s" % (TIMEOUT_S, " ".join(cmd)))
    output = proc.stderr
    if proc.returncode < 0:
        fail("splc was killed by signal %d" % -proc.returncode, output + proc.stdout)
    if proc.returncode != 1:
        fail("splc exited with status %d, expected 1 (2 is an internal error)" % proc.returncode,
             output + proc.stdout)
    if b"internal compiler error" in output:
        fail("an internal compiler error was reported", output)

    out_lines = output.split(b"\n")
    header = re.compile(rb"^(.*):(\d+):(\d+): (error|note|warning): (.*)$")
    unlocated = re.compile(rb"^splc: (error|note|warning): (.*)$")
    pathb = path.encode()
    diags = []
    for i, line in enumerate(out_lines):
        m = header.match(line)
        if m and m.group(1) == pathb:
            d = Diag(m.group(4), int(m.group(2)), int(m.group(3)), m.group(5), line)
            check_source_and_caret(out_lines, i, lines, d, output)
            diags.append(d)
            continue
        if m and m.group(4) == b"error":
            fail("an error located in another file: %r" % line, output)
        m = unlocated.match(line)
        if m:
            diags.append(Diag(m.group(1), None, None, m.group(2), line))

    for e in expected:
        match = None
        for d in diags:
            if d.used or d.kind != e.kind or d.line != e.line:
                continue
            if e.col is not None and d.col != e.col:
                continue
            if e.text not in d.text:
                continue
            match = d
            break
        if match is None:
            fail("missing diagnostic: %s" % e.describe(), output)
        match.used = True

    extra = [d for d in diags if d.kind == b"error" and not d.used]
    # "N more errors not shown" is a note, never an error; any other error line is unexpected.
    if extra:
        fail("unexpected error(s):\n  " + "\n  ".join(d.raw.decode("utf-8", "replace") for d in extra), output)
    if not any(d.kind == b"error" for d in diags):
        fail("splc failed without printing an error", output)
    sys.stdout.write("PASS: %s (%d diagnostic(s) checked)\n" % (os.path.basename(path), len(expected)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
