#!/usr/bin/env python3
"""run_tutorial.py TUTORIAL.md MODE BUILD_DIR: runs docs/tutorial.md as a reader would, so the page
and the test cannot drift. In an empty folder it writes every ```spl and ```c block whose first
line names a file (`// spmv.spl`, `/* main.c */`), then runs, in order, every ```sh block with
no mode and the one marked with MODE (`build-tree` or `installed`), each line in bash -e. MODE
build-tree puts BUILD_DIR/bin on PATH and sets SPL_BUILD; MODE installed first installs
BUILD_DIR into a temporary prefix (cmake --install) and puts its bin on PATH and its pkg-config
folder on PKG_CONFIG_PATH. Passes when the last command prints the output the page promises
(`3 3 9`)."""
import os
import re
import subprocess
import sys
import tempfile


def blocks(text):
    """(info string, body) of every fenced block."""
    return re.findall(r"^```([^\n]*)\n(.*?)^```\s*$", text, re.M | re.S)


def main():
    if len(sys.argv) != 4 or sys.argv[2] not in ("build-tree", "installed"):
        sys.stderr.write("usage: run_tutorial.py TUTORIAL.md build-tree|installed BUILD_DIR\n")
        return 2
    page, mode, build = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])
    with open(page) as f:
        fenced = blocks(f.read())
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        if mode == "build-tree":
            env["SPL_BUILD"] = build
            env["PATH"] = os.path.join(build, "bin") + os.pathsep + env["PATH"]
        else:
            prefix = os.path.join(tmp, "prefix")
            subprocess.run(["cmake", "--install", build, "--prefix", prefix], check=True, stdout=subprocess.DEVNULL)
            env["PATH"] = os.path.join(prefix, "bin") + os.pathsep + env["PATH"]
            libdirs = [d for d in ("lib", "lib64", "lib/x86_64-linux-gnu") if os.path.isdir(os.path.join(prefix, d, "pkgconfig"))]
            env["PKG_CONFIG_PATH"] = os.path.join(prefix, libdirs[0], "pkgconfig") if libdirs else ""
        work = os.path.join(tmp, "work")
        os.mkdir(work)
        written, commands = [], []
        for info, body in fenced:
            words = info.split()
            lang = words[0] if words else ""
            first = body.split("\n", 1)[0].strip()
            name = re.match(r"^(?://|/\*)\s*([\w.]+)\s*(?:\*/)?$", first)
            if lang in ("spl", "c") and name:
                with open(os.path.join(work, name.group(1)), "w") as out:
                    out.write(body)
                written.append(name.group(1))
            elif lang == "sh" and (len(words) == 1 or words[1] == mode):
                commands += [line for line in body.splitlines() if line.strip() and not line.strip().startswith("#")]
        if "main.c" not in written or not any(w.endswith(".spl") for w in written):
            print("FAIL: the page lost its files (written: %s)" % written)
            return 1
        output = ""
        for cmd in commands:
            proc = subprocess.run(["bash", "-e", "-c", cmd], cwd=work, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, timeout=300)
            output = proc.stdout.decode("utf-8", "replace")
            print("$ " + cmd + "\n" + output, end="")
            if proc.returncode != 0:
                print("FAIL: exit status %d" % proc.returncode)
                return 1
            if re.search(r"warning|error", output, re.I) and "--emit" not in cmd:
                print("FAIL: the command printed a warning or an error")
                return 1
        if output.strip() != "3 3 9":
            print("FAIL: the program printed %r, the page promises '3 3 9'" % output.strip())
            return 1
        print("PASS: the tutorial (%s), %d files, %d commands" % (mode, len(written), len(commands)))
        return 0


if __name__ == "__main__":
    sys.exit(main())
