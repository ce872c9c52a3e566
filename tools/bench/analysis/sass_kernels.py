#!/usr/bin/env python3
# Copyright 2026 The Sieve Authors.
"""Kernel-by-kernel SASS fingerprints of CUDA objects, to prove that a change left device code
alone (or to name the kernels it changed).

  sass_kernels.py list OBJ...            md5 and name of every kernel's SASS, one per line
  sass_kernels.py compare BEFORE AFTER   BEFORE/AFTER: a listing, an object or a folder of
                                         objects; prints identical / changed / only-in kernels

Each kernel's text comes from `cuobjdump -sass` with the instruction addresses, the column
alignment and blank lines stripped (the encodings stay: they carry registers, immediates, branch
offsets and scheduling bits). List only the objects a build links: a folder may still hold
objects of sources that no longer exist. Names are
demangled and normalised so that moving a kernel between namespaces does not count as a change
("(anonymous namespace)::", "detail::ts::" and "detail::" are dropped). Needs cuobjdump and
nvdisasm on PATH, or CUOBJDUMP naming cuobjdump (pip: nvidia-cuda-cuobjdump,
nvidia-cuda-nvdisasm).
"""

import hashlib
import os
import re
import subprocess
import sys

ADDR = re.compile(r"/\*[0-9a-f]{4,}\*/")


def demangle(names):
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                         check=True).stdout.split("\n")
    return out[: len(names)]


def normalise(name):
    for junk in ("(anonymous namespace)::", "detail::ts::", "detail::"):
        name = name.replace(junk, "")
    return name


def kernels(obj):
    tool = os.environ.get("CUOBJDUMP", "cuobjdump")
    text = subprocess.run([tool, "-sass", obj], capture_output=True, text=True, check=True).stdout
    found = {}
    name, body, arch = None, [], ""
    for line in text.split("\n") + ["\t\tFunction : <end>"]:
        m = re.search(r"code for (sm_\w+)", line)
        if m:
            arch = m.group(1)
        if "Function :" in line:
            if name is not None:
                found[(name, arch)] = "\n".join(body)
            name, body = line.split("Function :")[1].strip(), []
            continue
        if name is not None:
            # Addresses go; so does the column alignment, which depends on the longest
            # instruction of the whole object.
            text = " ".join(ADDR.sub("", line).split())
            if text:
                body.append(text)
    mangled = [n for n, _ in found]
    readable = dict(zip(mangled, demangle(mangled))) if mangled else {}
    return {(normalise(readable[n]), a): hashlib.md5(b.encode()).hexdigest()
            for (n, a), b in found.items()}


def listing(paths):
    out = {}
    for p in paths:
        if os.path.isdir(p):
            objs = sorted(os.path.join(d, f) for d, _, fs in os.walk(p) for f in fs
                          if f.endswith(".o"))
        elif p.endswith(".o"):
            objs = [p]
        else:
            with open(p) as f:
                for line in f:
                    md5, arch, name = line.rstrip("\n").split(" ", 2)
                    out[(name, arch)] = md5
            continue
        for o in objs:
            out.update(kernels(o))
    return out


def main(argv):
    if len(argv) >= 3 and argv[1] == "list":
        for (name, arch), md5 in sorted(listing(argv[2:]).items()):
            print(md5, arch, name)
        return 0
    if len(argv) == 4 and argv[1] == "compare":
        a, b = listing([argv[2]]), listing([argv[3]])
        same = sorted(k for k in a if k in b and a[k] == b[k])
        changed = sorted(k for k in a if k in b and a[k] != b[k])
        gone = sorted(k for k in a if k not in b)
        new = sorted(k for k in b if k not in a)
        print(f"identical: {len(same)}  changed: {len(changed)}  only before: {len(gone)}  "
              f"only after: {len(new)}")
        for title, keys in (("changed", changed), ("only before", gone), ("only after", new)):
            for name, arch in keys:
                print(f"{title}: {arch} {name}")
        return 0 if not changed else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
