#!/usr/bin/env python3
# Writes the load-run collection inputs (standard library only): vecs.npy, N x D float32
# uniform in [-1, 1), and attrs.jsonl with cat = i % 100.  Usage: make_load_collection.py [N] [D]
import sys
import array, random
random.seed(0)
n = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
d = int(sys.argv[2]) if len(sys.argv) > 2 else 128
r = random.random
a = array.array('f', [r() * 2 - 1 for _ in range(n * d)])
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (n, d)
header += ' ' * (127 - 10 - len(header)) + '\n'
with open('vecs.npy', 'wb') as f:
    f.write(b'\x93NUMPY\x01\x00' + len(header).to_bytes(2, 'little') + header.encode())
    a.tofile(f)
with open('attrs.jsonl', 'w') as f:
    for i in range(n):
        f.write('{"cat": %d}\n' % (i % 100))
