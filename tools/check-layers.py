#!/usr/bin/env python3
"""Fails when a source file includes a folder its layer may not see (docs/architecture.md).

Usage: check-layers.py [ROOT]. Reads every C++/CUDA source under the layered folders and checks
each quoted #include "folder/..." against the table below; prints one line per violation (file,
line, the include, what that folder may include) and exits 1 when there is any. A ctest
(`layering`) runs it, so a wrong include fails CI even where it would still link.
"""
import pathlib
import re
import sys

# Folder -> the folders its sources may include (besides its own). Longest prefix wins.
ALLOWED = {
    "include/sieve": {"sieve"},
    # The text analyzer and index segments: below storage, which stores the segments.
    "text": {"sieve"},
    "storage": {"sieve", "text"},
    "index": {"sieve", "storage", "text"},
    "filter": {"sieve", "index", "storage", "text"},
    "query": {"sieve", "filter", "index", "storage", "text"},
    "gpu": {"sieve", "query", "index", "storage"},
    "engine": {"sieve", "query", "gpu", "filter", "index", "storage", "text"},
    # The adapters see the public API and their own folder only.
    "tools/cli": {"sieve", "tools"},
    "tools/server": {"sieve", "tools"},
    "tools/io": {"sieve", "tools"},
    "tools/example": {"sieve"},
    "python/src": {"sieve", "python"},
}
# engine/ reaches gpu/ through its one factory only.
ONLY = {("engine", "gpu"): {"gpu/gpu_backend.h"}}
OWN = {"include/sieve": "sieve", "tools/cli": "tools", "tools/server": "tools",
       "tools/io": "tools", "tools/example": "tools", "python/src": "python"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCES = {".h", ".cc", ".cu", ".cuh"}


def layer_of(rel):
    best = None
    for folder in ALLOWED:
        if rel == folder or rel.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    bad = []
    checked = 0
    for path in sorted(root.rglob("*")):
        if path.suffix not in SOURCES or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        if rel.startswith("build") or rel.startswith("."):
            continue
        layer = layer_of(rel)
        if layer is None:
            continue
        checked += 1
        own = OWN.get(layer, layer.split("/")[0])
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m or "/" not in m.group(1):
                continue
            target = m.group(1)
            top = target.split("/")[0]
            if top == own:
                continue
            if top not in ALLOWED[layer]:
                bad.append(f"{rel}:{n}: includes \"{target}\"; {layer}/ may include "
                           f"{', '.join(sorted(ALLOWED[layer] | {own}))}/ only")
            elif (layer, top) in ONLY and target not in ONLY[(layer, top)]:
                bad.append(f"{rel}:{n}: includes \"{target}\"; {layer}/ reaches {top}/ through "
                           f"{', '.join(sorted(ONLY[(layer, top)]))} only")
    for line in bad:
        print(line)
    print(f"check-layers: {checked} files, {len(bad)} wrong includes")
    return 1 if bad or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
