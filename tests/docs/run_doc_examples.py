#!/usr/bin/env python3
"""run_doc_examples.py SPLC PAGE.md...: every example of the documentation compiles. An example
is a fenced ```spl block whose first line is `// example: NAME`; it is a whole file, compiled
with `splc FILE --target=cpu -o FILE.o` when it exports something for the CPU, else checked
with `--emit=types`. Passes when every example exits 0 and there is at least one; names are
unique per run. Also fails on a relative link in a page that points at no file (a dangling
reference)."""
import os
import re
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) < 3:
        sys.stderr.write("usage: run_doc_examples.py SPLC PAGE.md...\n")
        return 2
    splc, pages = sys.argv[1], sys.argv[2:]
    failures, names = [], set()
    with tempfile.TemporaryDirectory() as tmp:
        for page in pages:
            with open(page) as f:
                text = f.read()
            for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
                if "://" in target or target.startswith("mailto:"):
                    continue
                if not os.path.exists(os.path.join(os.path.dirname(os.path.abspath(page)), target)):
                    failures.append("%s: the link (%s) points at no file" % (page, target))
            for body in re.findall(r"^```spl\n(.*?)^```\s*$", text, re.M | re.S):
                m = re.match(r"//\s*example:\s*(\w+)\s*\n", body)
                if not m:
                    continue
                name = m.group(1)
                if name in names:
                    failures.append("%s: two examples are named %s" % (page, name))
                names.add(name)
                path = os.path.join(tmp, name + ".spl")
                with open(path, "w") as out:
                    out.write(body)
                exports_cpu = re.search(r"^export\b.*\bfor\b[^;]*\bcpu\b", body, re.M) or re.search(
                    r"^export\b(?!.*\bfor\b)", body, re.M)
                cmd = [splc, path] + (["--target=cpu", "-o", path + ".o"] if exports_cpu else ["--emit=types", "-o", path + ".types"])
                proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
                if proc.returncode != 0:
                    failures.append("%s: example %s: %s exited %d\n%s" % (page, name, " ".join(cmd[2:]), proc.returncode,
                                                                          proc.stdout.decode("utf-8", "replace")))
    for f in failures:
        print("FAIL: " + f)
    if not names:
        print("FAIL: no examples found in " + ", ".join(pages))
        return 1
    if failures:
        return 1
    print("PASS: %d examples compile" % len(names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
