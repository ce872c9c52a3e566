#!/usr/bin/env python3
"""Converts Debian's dataset-fashion-mnist into Sieve's ingest formats.

Writes, into --out:
  train.npy        60000 x 784 float32 (pixel values 0..255)
  train.jsonl      one object per row: {"label": 0..9, "category": "<class name>", "idx": i}
  queries.npy      the first --queries test images, float32
  query_labels.txt their labels, one per line
  filters.txt      one filter per query: "label = <its own label>"
"""
import argparse
import gzip
import json
import os
import struct
from array import array

SRC = "/usr/share/datasets/fashion-mnist"
CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
           "Sneaker", "Bag", "Ankle boot"]


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return dims, data[4 + 4 * ndim:]


def write_npy_f32(path, rows, cols, pixels):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    floats = array("f", array("B", pixels))  # element-wise, not a reinterpretation of bytes
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        floats.tofile(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--queries", type=int, default=8)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    (n, h, w), images = read_idx(os.path.join(SRC, "train-images-idx3-ubyte.gz"))
    (_,), labels = read_idx(os.path.join(SRC, "train-labels-idx1-ubyte.gz"))
    write_npy_f32(os.path.join(a.out, "train.npy"), n, h * w, images)
    with open(os.path.join(a.out, "train.jsonl"), "w") as f:
        for i, lab in enumerate(labels):
            f.write(json.dumps({"label": lab, "category": CLASSES[lab], "idx": i}) + "\n")
    (tn, _, _), timages = read_idx(os.path.join(SRC, "t10k-images-idx3-ubyte.gz"))
    (_,), tlabels = read_idx(os.path.join(SRC, "t10k-labels-idx1-ubyte.gz"))
    q = min(a.queries, tn)
    write_npy_f32(os.path.join(a.out, "queries.npy"), q, h * w, timages[:q * h * w])
    with open(os.path.join(a.out, "query_labels.txt"), "w") as f:
        f.write("".join("%d\n" % lab for lab in tlabels[:q]))
    with open(os.path.join(a.out, "filters.txt"), "w") as f:
        f.write("".join("label = %d\n" % lab for lab in tlabels[:q]))
    print("fashion-mnist: %d x %d train rows, %d queries -> %s" % (n, h * w, q, a.out))


if __name__ == "__main__":
    main()
