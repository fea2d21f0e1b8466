#!/usr/bin/python3
"""Lists the device code in NVIDIA fatbins, as `cuobjdump --list-elf
--list-ptx` does, for machines without cuobjdump (the CUDA toolkit on CI has
none): the file is a fatbin, or an ELF host binary whose `.nv_fatbin`
section holds them (ober-compile --target=cuda puts the kernels there).

  list_fatbin.py FILE      # one line per entry: "elf sm_90" or "ptx sm_100"

Exits 1 with a message when the file holds no fatbin.
"""
import struct
import sys

MAGIC = 0xBA55ED50
KINDS = {1: "ptx", 2: "elf"}


def nv_fatbin_section(data):
    """The .nv_fatbin section of a 64-bit little-endian ELF, or None."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)

    def section(i):
        name, _, _, _, offset, size = struct.unpack_from(
            "<IIQQQQ", data, shoff + i * shentsize)
        return name, offset, size

    _, names_at, _ = section(shstrndx)
    for i in range(shnum):
        name, offset, size = section(i)
        end = data.index(b"\0", names_at + name)
        if data[names_at + name:end] == b".nv_fatbin":
            return data[offset:offset + size]
    return None


def entries(blob):
    """(kind, sm) of every entry of the fatbins packed in `blob`."""
    out, at = [], 0
    while at + 16 <= len(blob):
        magic, _, header, size = struct.unpack_from("<IHHQ", blob, at)
        if magic != MAGIC:
            at += 8  # fatbins are 8-byte aligned; skip padding
            continue
        entry, end = at + header, at + header + size
        while entry < end:
            kind, _, entry_header, payload = struct.unpack_from(
                "<HHIQ", blob, entry)
            sm, = struct.unpack_from("<I", blob, entry + 28)
            out.append((KINDS.get(kind, f"kind{kind}"), sm))
            entry += entry_header + payload
        at = end
    return out


def main(path):
    data = open(path, "rb").read()
    blob = nv_fatbin_section(data)
    if blob is None:
        blob = data
    found = entries(blob)
    if not found:
        sys.exit(f"{path}: no fatbin (no .nv_fatbin section, no fatbin header)")
    for kind, sm in found:
        print(f"{kind} sm_{sm}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
