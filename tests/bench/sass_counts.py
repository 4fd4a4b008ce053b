#!/usr/bin/env python3
"""sass_counts.py - the machine instructions of every kernel of a CUDA plugin.

For each architecture the plugin carries machine code for (sm_80, sm_89,
sm_90a) and each kernel (every template instance), the number of SASS
instructions and a digest of their bytes. The count is the kernel's text
section over 16 bytes (every instruction from sm_70 on is 16 bytes), which is
the number of lines `cuobjdump -sass` lists for it, the padding after its
last branch included; two builds whose digests agree run the same code.
Reads the ELF images in the library's fat binary itself, so it needs no CUDA
tools (nvcc embeds them uncompressed unless told to compress).

usage: tests/bench/sass_counts.py PLUGIN.so > counts.tsv
       tests/bench/sass_counts.py --compare BEFORE.tsv AFTER.tsv
The first prints arch, instructions, digest and kernel (demangled by c++filt
where it is installed), tab-separated; the second prints every kernel whose
count or code differs, then a summary, and exits 1 when any count differs.
"""
import hashlib
import shutil
import struct
import subprocess
import sys

FATBIN_MAGIC = 0xBA55ED50
ENTRY_ELF = 2                   # an entry's kind: machine code (1 is PTX)
COMPRESSED = 0x2000             # entry flags: the payload is compressed
ARCH_SPECIFIC = 0x100000        # entry flags: code for an "a" target (sm_90a)


def elf_images(lib):
    """(arch, bytes) of every ELF image in the library's .nv_fatbin section."""
    data = open(lib, "rb").read()
    for name, off, size in sections(data):
        if name != ".nv_fatbin":
            continue
        p, end = off, off + size
        while p + 16 <= end:
            magic, _, head, body = struct.unpack_from("<IHHQ", data, p)
            if magic != FATBIN_MAGIC:
                p += 8                          # fat binaries are 8-byte aligned
                continue
            q = p + head
            while q < p + head + body:
                kind, _, ehead, payload = struct.unpack_from("<HHIQ", data, q)
                sm = struct.unpack_from("<I", data, q + 28)[0]
                flags = struct.unpack_from("<I", data, q + 40)[0]
                if kind == ENTRY_ELF:
                    if flags & COMPRESSED:
                        sys.exit("sass_counts.py: %s holds compressed machine code (build it without "
                                 "fatbin compression)" % lib)
                    yield "sm_%d%s" % (sm, "a" if flags & ARCH_SPECIFIC else ""), data[q + ehead:q + ehead + payload]
                q += ehead + payload
            p = q


def sections(elf):
    """(name, offset, size) of every section of a 64-bit little-endian ELF."""
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    strtab = heads[shstrndx]
    for h in heads:
        start = strtab[4] + h[0]
        name = elf[start:elf.index(b"\0", start)].decode()
        yield name, h[4], h[5]


def demangle(names):
    tool = shutil.which("c++filt")
    if not tool or not names:
        return names
    out = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def counts(lib):
    rows = []
    for arch, elf in elf_images(lib):
        for name, off, size in sections(elf):
            if name.startswith(".text."):
                text = elf[off:off + size]
                rows.append((arch, name[len(".text."):], size // 16, hashlib.sha1(text).hexdigest()[:12]))
    names = demangle([r[1] for r in rows])
    return sorted((a, n, c, d) for (a, _, c, d), n in zip(rows, names))


def read_tsv(path):
    table = {}
    for line in open(path):
        arch, count, digest, kernel = line.rstrip("\n").split("\t")
        table[(arch, kernel)] = (int(count), digest)
    return table


def compare(before_path, after_path):
    before, after = read_tsv(before_path), read_tsv(after_path)
    changed = same_code = same_count = 0
    for key in sorted(set(before) | set(after)):
        b, a = before.get(key), after.get(key)
        if b and a and b[1] == a[1]:
            same_code += 1
            continue
        if b and a and b[0] == a[0]:
            same_count += 1
            print("%s\t%d -> %d\tother code, same count\t%s" % (key[0], b[0], a[0], key[1]))
            continue
        changed += 1
        print("%s\t%s -> %s\t%s" % (key[0], b[0] if b else "none", a[0] if a else "none", key[1]))
    print("%d kernels: %d the same code, %d the same count, %d changed in count or added or gone"
          % (len(set(before) | set(after)), same_code, same_count, changed))
    return 1 if changed else 0


def main(argv):
    if len(argv) == 4 and argv[1] == "--compare":
        return compare(argv[2], argv[3])
    if len(argv) != 2 or argv[1].startswith("-"):
        sys.exit(__doc__.split("\n\n")[2])
    for arch, kernel, count, digest in counts(argv[1]):
        print("%s\t%d\t%s\t%s" % (arch, count, digest, kernel))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
