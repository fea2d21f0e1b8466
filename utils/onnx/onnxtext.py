#!/usr/bin/python3
"""Turns an ONNX text-format model into a binary .onnx file.

  onnxtext.py in.onnxtext out.onnx

Lines starting with `//` (lit RUN and CHECK lines) are dropped first, so
test models keep their expectations beside the model text. The model is not
checked, so tests can describe invalid models too.
"""
import sys

import onnx
import onnx.parser


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with open(src) as f:
        text = "".join(l for l in f if not l.lstrip().startswith("//"))
    onnx.save(onnx.parser.parse_model(text), dst)


if __name__ == "__main__":
    main()
