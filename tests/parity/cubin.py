"""A CUBIN's kernels, read from its ELF, for the parity scripts: its sections, and whether two
images hold the same kernels (same_kernels): the kernel nvcc would build, whatever else NVRTC puts
in the module.

NVRTC emits every static data member the headers instantiate (cuda::std's integral_constant<...>::
value and the like: up to a thousand globals, their addresses in constant bank 4), where nvcc emits
those the code uses. The kernels' code is then nvcc's byte for byte, but for the bank-4 offsets of
the globals they do use (ULDC.64 UR4, c[0x4][0x10] for nvcc's c[0x4][0x4] ...). Two images hold the
same kernels when each kernel has:
  - the same instructions, byte for byte, but for such a bank-4 load whose entry in each image is
    the address of the same global (by name, and the global the same size and initial bytes);
  - the same registers (the .text section's flags), attributes (.nv.info, symbol indices read as
    names), parameter bank and static shared sizes, and code relocations (by symbol name);
and the module the same constant banks other than 0 (parameters) and 4 (addresses).
"""
import struct

SHT_RELA, SHT_NOBITS = 4, 8
ULDC, LDC = 0xab9, 0xb82   # the opcodes (bits 0-11) that load from a constant bank


class Cubin:
    """An ELF64 little-endian CUBIN: sections by name (type, flags, bytes), symbols (name, section
    index, value, size), and each section's relocations (offset, type, symbol name, addend)."""

    def __init__(self, path):
        with open(path, "rb") as f:
            data = f.read()
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
        heads = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
        names = heads[shstrndx][4]
        cstr = lambda at: data[at:data.index(b"\0", at)].decode()
        self.list = []  # (name, type, flags, bytes, link, info) in file order
        for h in heads:
            body = b"\0" * h[5] if h[1] == SHT_NOBITS else data[h[4]:h[4] + h[5]]
            self.list.append((cstr(names + h[0]), h[1], h[2], body, h[6], h[7]))
        self.by_name = {s[0]: s for s in self.list}
        self.symbols = []
        symtab = self.by_name.get(".symtab")
        if symtab:
            strtab = heads[symtab[4]][4]
            for at in range(0, len(symtab[3]) - 23, 24):
                name, _, _, shndx, value, size = struct.unpack_from("<IBBHQQ", symtab[3], at)
                self.symbols.append((cstr(strtab + name), shndx, value, size))

    def sections(self):
        """[(name, flags, bytes)], as build_images.py reads them."""
        return [(s[0], s[2], s[3]) for s in self.list]

    def relocations(self, target):
        """[(offset, type, symbol name, addend)] of section `target`, by offset."""
        out = []
        for name, kind, _, body, _, info in self.list:
            if kind != SHT_RELA or self.list[info][0] != target:
                continue
            for at in range(0, len(body) - 23, 24):
                offset, rinfo, addend = struct.unpack_from("<QQq", body, at)
                out.append((offset, rinfo & 0xffffffff, self.symbols[rinfo >> 32][0], addend))
        return sorted(out)

    def symbol_bytes(self, name):
        """(size, initial bytes or None where uninitialised) of the symbol `name`, or None."""
        for sym, shndx, value, size in self.symbols:
            if sym == name and 0 < shndx < len(self.list):
                s = self.list[shndx]
                return size, (None if s[1] == SHT_NOBITS else s[3][value:value + size])
        return None

    def symbol_name(self, index):
        return self.symbols[index][0] if index < len(self.symbols) else "#%d" % index

    def info(self, name):
        """The .nv.info records of a section, each (attribute, payload), symbol indices read as
        names: EIATTR_PARAM_CBANK's first word, EIATTR_EXTERNS' words (the functions a kernel
        calls: vprintf, __assertfail), and the first word of an 8-byte module record (registers,
        frame and stack sizes, per function). EIATTR_CUDA_API_VERSION (the compiler's release)
        is left out."""
        body, at, out = self.by_name.get(name, (0, 0, 0, b""))[3], 0, []
        while at + 4 <= len(body):
            fmt, attr, size = struct.unpack_from("<BBH", body, at)
            if fmt != 4:  # a value in the header itself
                out.append((attr, size))
                at += 4
                continue
            payload = body[at + 4:at + 4 + size]
            at += 4 + size
            if attr == 0x37:
                continue
            if attr == 0x0f:
                payload = tuple(self.symbol_name(i) for i in struct.unpack_from("<%dI" % (size // 4), payload))
            elif (attr == 0x0a or name == ".nv.info") and size >= 4:
                payload = (self.symbol_name(struct.unpack_from("<I", payload)[0]), payload[4:])
            out.append((attr, payload))
        return sorted(out, key=repr) if name == ".nv.info" else out

    def global_key(self, name, addend=0):
        """What names a global across images: its name, but the compiler's own ($str, $str$1: a
        string literal, numbered by each compiler its way) by its bytes."""
        return (name if not name.startswith("$") else self.symbol_bytes(name)), addend

    def bank4_target(self, offset):
        """The symbol (name, addend) whose address constant bank 4 holds at byte `offset`."""
        for at, _, sym, addend in self.relocations(".nv.constant4"):
            if at == offset:
                return sym, addend
        return None


def constant_load(word):
    """(bank, byte offset) of a ULDC/LDC instruction (16 bytes), else None. The bank is bits
    54-58, the offset in words bits 40-53."""
    w = int.from_bytes(word, "little")
    if w & 0xfff not in (ULDC, LDC):
        return None
    return (w >> 54) & 0x1f, ((w >> 40) & 0x3fff) * 4


def same_code(a, b, ca, cb, used):
    """Whether code ca (of image a) and cb (of b) are the same but for bank-4 loads of the same
    global's address; the globals so loaded are added to used."""
    if len(ca) != len(cb):
        return False
    mask = ~(0x3fff << 40)
    for at in range(0, len(ca), 16):
        wa, wb = ca[at:at + 16], cb[at:at + 16]
        if wa == wb:
            continue
        la, lb = constant_load(wa), constant_load(wb)
        if not (la and lb and la[0] == lb[0] == 4 and
                int.from_bytes(wa, "little") & mask == int.from_bytes(wb, "little") & mask):
            return False
        ta, tb = a.bank4_target(la[1]), b.bank4_target(lb[1])
        if ta is None or tb is None or a.global_key(*ta) != b.global_key(*tb):
            return False
        used.add(ta[0])
    return True


def same_kernels(path_a, path_b):
    """(True, how) where the images at path_a and path_b hold the same kernels (above), else
    (False, the first difference)."""
    a, b = Cubin(path_a), Cubin(path_b)
    ka = sorted(n for n in a.by_name if n.startswith(".text."))
    kb = sorted(n for n in b.by_name if n.startswith(".text."))
    if ka != kb:
        return False, "other kernels or functions"
    used, shifted = set(), 0
    for text in ka:
        k = text[6:]
        sa, sb = a.by_name[text], b.by_name[text]
        if sa[2] != sb[2]:
            return False, "%s: registers %d/%d" % (k, sa[2] >> 24, sb[2] >> 24)
        if sa[3] != sb[3]:
            if not same_code(a, b, sa[3], sb[3], used):
                return False, "%s: code" % k
            shifted += 1
        if a.info(".nv.info." + k) != b.info(".nv.info." + k):
            return False, "%s: attributes (.nv.info)" % k
        for part in (".nv.shared.", ".nv.constant0."):
            if len(a.by_name.get(part + k, (0, 0, 0, b""))[3]) != len(b.by_name.get(part + k, (0, 0, 0, b""))[3]):
                return False, "%s: %s size" % (k, part.strip("."))
        ra, rb = a.relocations(text), b.relocations(text)
        if [r[1:] + (r[0],) for r in ra] != [r[1:] + (r[0],) for r in rb]:
            return False, "%s: code relocations" % k
        used.update(r[2] for r in ra)
    if a.info(".nv.info") != b.info(".nv.info"):
        return False, "registers, frame or stack sizes (.nv.info)"
    for name, kind, _, body, _, _ in a.list:
        if name.startswith(".nv.constant") and not name.startswith((".nv.constant0", ".nv.constant4")):
            if b.by_name.get(name, (0, 0, 0, None))[3] != body:
                return False, "constant bank %s" % name[len(".nv.constant"):]
    for sym in sorted(used):
        if not sym.startswith("$") and a.symbol_bytes(sym) != b.symbol_bytes(sym):
            return False, "the global %s" % sym
    return True, ("the same code byte for byte" if not shifted else
                  "the same code but for %d kernel(s)' bank-4 offsets of the same globals" % shifted)
