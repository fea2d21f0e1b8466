"""Writes each module of a -split-input-file output to DIR/part<i>.mlir.

  split_modules.py FILE DIR
"""
import sys

text = open(sys.argv[1]).read()
for i, part in enumerate(p for p in text.split("// -----") if p.strip()):
    open(f"{sys.argv[2]}/part{i}.mlir", "w").write(part)
