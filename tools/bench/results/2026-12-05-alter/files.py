"""Lists a Sieve store's files as JSON lines: name, bytes, inode, mtime (ns) and, for table
files, the column family RocksDB recorded in the file's properties block (read from the file
itself: in the properties block the key 'rocksdb.column.family.name' is stored after '...id' as
its unshared suffix 'name', then the value)."""
import json
import os
import sys

FAMILIES = (b"vectors", b"rows", b"meta", b"default")


def family_of(path):
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - (1 << 16)))
        tail = f.read()
    at = tail.rfind(b"column.family.id")
    if at < 0:
        return None
    window = tail[at:at + 256]
    hits = [(window.find(name), name) for name in FAMILIES if window.find(name) >= 0]
    return min(hits)[1].decode() if hits else None


for name in sorted(os.listdir(sys.argv[1])):
    p = os.path.join(sys.argv[1], name)
    st = os.stat(p)
    row = {"file": name, "bytes": st.st_size, "inode": st.st_ino, "mtime_ns": st.st_mtime_ns}
    if name.endswith(".sst"):
        row["family"] = family_of(p)
    print(json.dumps(row))
