#!/usr/bin/env python3
"""size.py MAP BINARY - what each archive and object costs in BINARY, from the
GNU ld linker map MAP of its link (make size; make bench keeps the output in
build/bench/size.txt).

Counts the input sections the link kept (after --gc-sections) in every output
section that takes room in the file (not .bss, .tbss, debugging or comments),
summed by archive, and for the largest archives by member. turninit's own
objects are one entry: with -flto they reach the linker as ltrans objects.
Then the stripped size of BINARY: a figure, reported with every change, not a
goal (docs/benchmarks.md). Standard library only."""
import collections
import os
import re
import sys

NOT_IN_FILE = (".bss", ".tbss")
SKIP = (".debug", ".comment", ".note.GNU-stack", ".gnu.warning", ".symtab", ".strtab",
        ".shstrtab")

map_path, binary = sys.argv[1], sys.argv[2]
lines = open(map_path).read().split("\n")
try:
    start = lines.index("Linker script and memory map")
except ValueError:
    sys.exit(f"size: {map_path}: not a GNU ld map")

by_archive = collections.Counter()
by_member = collections.defaultdict(collections.Counter)
out_sec = None
pending = None   # an input section name alone on its line; its figures follow
row = re.compile(r"^ (\S+)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$")
for line in lines[start + 1:]:
    m = re.match(r"^(\.\S+|\S+)\s", line) if line and not line.startswith(" ") else None
    if m:
        out_sec = m.group(1)
        continue
    if line.startswith(" ") and re.fullmatch(r" \S+", line):
        pending = line.strip()
        continue
    m = row.match(line)
    if not m or out_sec is None:
        pending = None
        continue
    size = int(m.group(3), 16)
    origin = m.group(4).strip()
    pending = None
    if size == 0 or out_sec.startswith(SKIP) or out_sec in NOT_IN_FILE:
        continue
    if not re.search(r"\.(o|lo|a\(.*\))\)?$", origin) and "(" not in origin:
        continue
    am = re.match(r"^(.*\.a)\((.*)\)$", origin)
    if am:
        archive, member = os.path.basename(am.group(1)), am.group(2)
    elif "ltrans" in origin:
        archive, member = "turninit (init/, policy/; LTO)", "ltrans"
    else:
        archive, member = os.path.basename(origin), os.path.basename(origin)
    by_archive[archive] += size
    by_member[archive][member] += size

total = sum(by_archive.values())
stripped = os.stat(binary).st_size
print(f"{'archive':<36} {'bytes':>9} {'KiB':>7} {'share':>6}")
for a, n in by_archive.most_common():
    print(f"{a:<36} {n:>9,} {n / 1024:>7.1f} {100 * n / total:>5.1f}%")
print(f"{'sections counted':<36} {total:>9,} {total / 1024:>7.1f}")
print()
for a, _ in by_archive.most_common(4):
    members = by_member[a]
    if len(members) < 2:
        continue
    print(f"{a}: its largest members")
    for mem, n in members.most_common(8):
        print(f"  {mem:<34} {n:>9,} {n / 1024:>7.1f}")
print()
print(f"{binary} stripped: {stripped:,} bytes ({stripped / 1024:.1f} KiB)")
