"""Compares two files.py listings: every vectors-family file of BEFORE must be in AFTER with the
same name, bytes, inode and mtime (not rewritten, not touched), and AFTER must hold no
vectors-family file BEFORE did not. Prints a summary line as JSON; exit 1 when that fails."""
import json
import sys


def load(path):
    return {r["file"]: r for r in map(json.loads, open(path))}


before, after = load(sys.argv[1]), load(sys.argv[2])
vec_before = {k: v for k, v in before.items() if v.get("family") == "vectors"}
vec_after = {k: v for k, v in after.items() if v.get("family") == "vectors"}
same = (all(after.get(k) == v for k, v in vec_before.items())
        and vec_after.keys() == vec_before.keys())
new = {k: v for k, v in after.items() if k not in before}
gone = [k for k in before if k not in after]
print(json.dumps({
    "vectors_files": len(vec_before), "vectors_bytes": sum(v["bytes"] for v in vec_before.values()),
    "vectors_files_identical": same,
    "new_files": {k: [v["bytes"], v.get("family")] for k, v in sorted(new.items())},
    "removed_files": gone,
}))
sys.exit(0 if same else 1)
