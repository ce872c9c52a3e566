#!/usr/bin/env python3
"""Keeps one GPU architecture's cubins in a shared library's .nv_fatbin section, in place.

Why: the device tool carries 64 MiB, libcuvs.so holds cubins for eight targets, and this
machine's CUDA toolkit has no nvprune. Each fatbin in the section is rewritten so that its kept
entries come first and its header's size covers only them; the bytes freed at its end are
zeroed. The file keeps its size and layout (no pointer or relocation changes), the CUDA loader
reads only the declared entries, and the zeros vanish when the library is compressed for travel.

Layout (CUDA fatbin container, as read by cuobjdump; all little-endian):
  container header: u32 magic 0xBA55ED50, u16 version, u16 header_size, u64 entries_size
  entry header:     u16 kind (1 PTX, 2 ELF), u16 version, u32 header_size, u64 payload_size,
                    ..., u32 arch at +28 (90 for sm_90/sm_90a), ...; entry = header + payload
Containers are stored back to back, each aligned to 8 bytes.

Compressed cubins (flag 0x8000, zstd frames) are already near their zstd -19 size, but a solid
xz of the same cubins stored uncompressed is about 40 % smaller. With --inflate-from DIR (the
output of `cuobjdump -xelf all LIB` on the pruned library, files <stem>.<container>.sm_<arch>*.cubin)
each kept cubin whose uncompressed size fits in the container's freed space is stored uncompressed,
with the entry header nvcc --no-compress writes: payload size = ELF size padded to 8, compressed
size (+16) = 0, uncompressed size (+56) = 0, flag 0x8000 cleared. Cubins that do not fit stay
compressed.

Usage: prune_fatbin.py LIB --keep-arch 90 [--keep-ptx] [--inflate-from DIR] [--dry-run]
A container with no entry of the kept architecture is left whole (and counted), so a kernel
is never lost.
"""
import argparse
import struct
import sys

kContainerMagic = 0xBA55ED50
kFlagCompressed = 0x8000
kElfMagic = b"\x7fELF"


def inflated(inflate_dir, container, arch):
    """The uncompressed cubin cuobjdump -xelf wrote for `container` (1-based), or None."""
    import glob
    import os
    hits = glob.glob(os.path.join(inflate_dir, f"*.{container}.sm_{arch}*.cubin"))
    if len(hits) != 1:
        return None
    with open(hits[0], "rb") as f:
        return f.read()


def section(data, name):
    """Returns (file offset, size) of ELF64 section `name`."""
    if data[:4] != b"\x7fELF" or data[4] != 2:
        sys.exit("not an ELF64 file")
    e_shoff, = struct.unpack_from("<Q", data, 0x28)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    def sh(i):
        return struct.unpack_from("<IIQQQQIIQQ", data, e_shoff + i * e_shentsize)
    stroff = sh(e_shstrndx)[4]
    for i in range(e_shnum):
        h = sh(i)
        end = data.index(b"\0", stroff + h[0])
        if data[stroff + h[0]:end].decode() == name:
            return h[4], h[5]
    sys.exit(f"no section {name}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--keep-arch", type=int, required=True)
    ap.add_argument("--keep-ptx", action="store_true", help="also keep PTX of that arch")
    ap.add_argument("--inflate-from", metavar="DIR",
                    help="store kept cubins uncompressed where they fit (see above)")
    ap.add_argument("--dry-run", action="store_true")
    a = ap.parse_args()

    with open(a.lib, "rb") as f:
        data = bytearray(f.read())
    off, size = section(data, ".nv_fatbin")
    end = off + size
    pos = off
    n_cont = n_whole = n_inflated = 0
    bytes_kept = bytes_zeroed = 0
    stats = {}  # (kind, arch) -> [count, bytes]
    while pos < end:
        if pos + 16 > end:
            break
        magic, ver, hsize, esize = struct.unpack_from("<IHHQ", data, pos)
        if magic != kContainerMagic:
            # padding between containers
            if data[pos:pos + 8] == b"\0" * 8:
                pos += 8
                continue
            sys.exit(f"bad container magic {magic:#x} at section offset {pos - off:#x}")
        n_cont += 1
        body = pos + hsize
        body_end = body + esize
        if body_end > end:
            sys.exit(f"container at {pos - off:#x} overruns the section")
        entries = []
        p = body
        while p < body_end:
            kind, _, eh, psize = struct.unpack_from("<HHIQ", data, p)
            arch, = struct.unpack_from("<I", data, p + 28)
            entries.append((p, eh + psize, kind, arch))
            s = stats.setdefault((kind, arch), [0, 0])
            s[0] += 1
            s[1] += eh + psize
            p += eh + psize
        if p != body_end:
            sys.exit(f"entries of container at {pos - off:#x} do not add up")
        # Room up to the next container: a pruned container's freed bytes are zeros, so a second
        # run (or --inflate-from after a plain prune) still sees the original space.
        nxt = (body_end + 7) & ~7
        while nxt + 8 <= end and data[nxt:nxt + 8] == b"\0" * 8:
            nxt += 8
        room = min(nxt, end) - body
        keep = [e for e in entries
                if e[3] == a.keep_arch and (e[2] == 2 or (a.keep_ptx and e[2] == 1))]
        if not any(e[2] == 2 for e in keep):
            n_whole += 1
            bytes_kept += esize
        else:
            parts = []
            for idx, e in enumerate(keep):
                entry = bytearray(data[e[0]:e[0] + e[1]])
                eh, = struct.unpack_from("<I", entry, 4)
                flags, = struct.unpack_from("<Q", entry, 40)
                full, = struct.unpack_from("<Q", entry, 56)
                if a.inflate_from and e[2] == 2 and flags & kFlagCompressed:
                    elf = inflated(a.inflate_from, n_cont, a.keep_arch)
                    if elf is None or len(elf) != full or elf[:4] != kElfMagic:
                        sys.exit(f"container {n_cont}: no matching cubin in {a.inflate_from}")
                    padded = (len(elf) + 7) & ~7
                    others = sum(len(x) for x in parts) + sum(x[1] for x in keep[idx + 1:])
                    if eh + padded + others <= room:
                        hdr = bytearray(entry[:eh])
                        struct.pack_into("<Q", hdr, 8, padded)
                        struct.pack_into("<I", hdr, 16, 0)
                        struct.pack_into("<Q", hdr, 40, flags & ~kFlagCompressed)
                        struct.pack_into("<Q", hdr, 56, 0)
                        entry = hdr + elf + b"\0" * (padded - len(elf))
                        n_inflated += 1
                parts.append(bytes(entry))
            blob = b"".join(parts)
            new_size = len(blob)
            bytes_kept += new_size
            bytes_zeroed += room - new_size
            if not a.dry_run:
                data[body:body + new_size] = blob
                data[body + new_size:body + room] = b"\0" * (room - new_size)
                struct.pack_into("<Q", data, pos + 8, new_size)
        pos = body + room

    kinds = {1: "ptx", 2: "elf"}
    for (kind, arch), (cnt, b) in sorted(stats.items()):
        print(f"  {kinds.get(kind, kind)} sm_{arch}: {cnt} entries, {b / 2**20:.1f} MiB")
    print(f"{a.lib}: .nv_fatbin {size / 2**20:.1f} MiB, {n_cont} containers "
          f"({n_whole} kept whole: no sm_{a.keep_arch} cubin), kept {bytes_kept / 2**20:.1f} MiB, "
          f"zeroed {bytes_zeroed / 2**20:.1f} MiB, {n_inflated} cubins stored uncompressed"
          f"{' (dry run)' if a.dry_run else ''}")
    if not a.dry_run:
        with open(a.lib, "r+b") as f:
            f.seek(off)
            f.write(data[off:end])


if __name__ == "__main__":
    main()
