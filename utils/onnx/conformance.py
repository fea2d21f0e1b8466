#!/usr/bin/python3
"""ONNX backend conformance for Ober-Train.

Runs every model of ONNX's backend test data (Debian's libonnx-testdata)
through `ober-run`, compares the outputs with the expected ones using ONNX's
tolerances, and writes a coverage table.

  conformance.py --ober-run build/bin/ober-run [--coverage docs/onnx-coverage.md]
                 [--expected test/onnx/expected-unsupported.txt] [--jobs N]
                 [--ober-compile build/bin/ober-compile]

A case passes when every output matches; it is `unsupported` when ober
rejects the model with a diagnostic (an unsupported op, attribute or type),
and `fail` when it runs and gives a wrong answer or crashes.

The expectations file lists, one per line, `<suite>/<case> unsupported` or
`<suite>/<case> differs` with a `# reason`: `differs` marks cases whose
expected outputs follow a convention ober deliberately does not (random
outputs of another generator, ONNX 1.12's truncating bfloat16 cast). Exit
status is non-zero when a case fails outside the list, when a case is
rejected outside the list, when a listed case passes now (shrink the list),
when fewer than --min-node-pass of the node cases pass, or when the coverage
table differs from --coverage-reference.

With --ober-compile, every case that passes in `ober-run` is also compiled
by `ober-compile --inference` into an executable, run on the same inputs
and checked the same way. A case the compiler refuses must be listed as
`<suite>/<case> compiled-unsupported # reason`; a wrong answer of the
executable is a failure.
"""

import argparse
import collections
import concurrent.futures
import glob
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

DEFAULT_ROOT = "/usr/share/libonnx-testdata/data"
SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"]
# ONNX's backend test tolerances.
RTOL, ATOL = 1e-3, 1e-7


def load_tensor(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def load_value(path):
    """A tensor, or a sequence of tensors, from a .pb file."""
    try:
        return load_tensor(path)
    except Exception:
        seq = onnx.SequenceProto()
        with open(path, "rb") as f:
            seq.ParseFromString(f.read())
        return [numpy_helper.to_array(t) for t in seq.tensor_values]


def close(expected, actual):
    if expected.dtype == np.uint16 and actual.dtype == np.float32:
        # ONNX stores bfloat16 as its 16 raw bits; ober writes bf16 results
        # as float32 (NumPy has no bfloat16).
        expected = (expected.astype(np.uint32) << 16).view(np.float32)
    if expected.shape != actual.shape:
        return False, f"shape {actual.shape} != expected {expected.shape}"
    if expected.dtype == object:
        strs = lambda a: [v.decode() if isinstance(v, bytes) else str(v) for v in a.flat]
        ok = strs(expected) == strs(actual)
        return ok, "" if ok else f"strings {strs(actual)} != {strs(expected)}"
    if expected.dtype.kind in "fc":
        ok = np.allclose(actual.astype(np.float64), expected.astype(np.float64),
                         rtol=RTOL, atol=ATOL, equal_nan=True)
    else:
        ok = np.array_equal(actual.astype(expected.dtype), expected)
    if ok:
        return True, ""
    with np.errstate(invalid="ignore"):
        diff = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
    return False, f"max abs error {np.nanmax(diff) if diff.size else 0:.3g}"


def graph_inputs(model_path):
    """(name, ONNX element type) of the graph's data inputs, in order (the
    element type of a sequence's tensors for a sequence)."""
    try:
        graph = onnx.load(model_path, load_external_data=False).graph
    except Exception:
        return []
    inits = {t.name for t in graph.initializer}
    out = []
    for i in graph.input:
        if i.name in inits:
            continue
        t = i.type
        if t.HasField("sequence_type"):
            t = t.sequence_type.elem_type
        out.append((i.name, t.tensor_type.elem_type))
    return out


def npy_value(value, elem_type):
    """`value` as ober-run takes it, or None when it takes no such input."""
    if elem_type == onnx.TensorProto.BFLOAT16 and value.dtype == np.uint16:
        # bfloat16 travels as its raw bits; ober takes float32.
        return (value.astype(np.uint32) << 16).view(np.float32)
    if value.dtype == object and all(isinstance(v, (str, bytes)) for v in value.flat):
        # ONNX strings travel as unicode arrays.
        return np.array([v.decode() if isinstance(v, bytes) else v
                         for v in value.flat]).reshape(value.shape)
    if value.dtype.kind not in "fiub" or value.dtype in (
            np.uint16, np.uint32, np.uint64, np.uint8, np.int16):
        return None
    return value


def data_set_inputs(data_set):
    """The data set's input values (a tensor, or a list of tensors for a
    sequence), in order."""
    paths = sorted(glob.glob(os.path.join(data_set, "input_*.pb")),
                   key=lambda p: int(re.findall(r"\d+", os.path.basename(p))[0]))
    return [load_value(p) for p in paths]


SEQUENCE_FLAG = "--onnx-sequence-length="


def sequence_flags(values, inputs_info):
    """--onnx-sequence-length=NAME=N for each sequence among `values`."""
    return [f"{SEQUENCE_FLAG}{inputs_info[i][0] if i < len(inputs_info) else ''}"
            f"={len(v)}" for i, v in enumerate(values) if isinstance(v, list)]


def prepare_inputs(values, inputs_info, tmp):
    """`values` as .npy files ([--input, path] ...), or (None, why) when
    ober takes no such input. A sequence input is its tensors, one --input
    each."""
    args = []
    for i, value in enumerate(values):
        elem_type = inputs_info[i][1] if i < len(inputs_info) else 0
        parts = value if isinstance(value, list) else [value]
        for k, part in enumerate(parts):
            part = npy_value(part, elem_type)
            if part is None:
                return None, f"input dtype {parts[k].dtype}"
            npy = os.path.join(tmp, f"in{i}_{k}.npy")
            np.save(npy, part)
            args += ["--input", npy]
    return args, ""


def run_tool(args, timeout):
    """("pass", "") when `args` ran; else the status and why: a diagnostic
    is a refusal, a crash (signal) or a silent exit a failure."""
    try:
        proc = subprocess.run(args, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return "fail", f"timed out after {timeout}s"
    if proc.returncode != 0:
        text = " ".join(proc.stderr.strip().splitlines())[:400]
        if proc.returncode < 0 or "error:" not in proc.stderr:
            return "fail", f"exit {proc.returncode}: {text}"
        return "unsupported", text
    return "pass", ""


def check_outputs(data_set, out):
    """The results in `out` against the expected outputs; a sequence output
    is as many results as it has tensors."""
    outputs = sorted(glob.glob(os.path.join(data_set, "output_*.pb")),
                     key=lambda p: int(re.findall(r"\d+", os.path.basename(p))[0]))
    result = 0
    for i, p in enumerate(outputs):
        expected = load_value(p)
        for part in (expected if isinstance(expected, list) else [expected]):
            got_path = os.path.join(out, f"{result}.npy")
            result += 1
            if not os.path.exists(got_path):
                return "fail", f"output {i} missing"
            ok, why = close(part, np.load(got_path))
            if not ok:
                return "fail", f"output {i}: {why}"
    if os.path.exists(os.path.join(out, f"{result}.npy")):
        return "fail", f"more results than the {result} expected"
    return "pass", ""


def data_sets(case_dir):
    return sorted(glob.glob(os.path.join(case_dir, "test_data_set_*")))


def run_data_sets(case_dir, command, timeout, import_flags=True):
    """Runs `command(out)` + the inputs of each data set of the case and
    checks its outputs in `out`. With `import_flags` (a tool that imports
    the model), sequence lengths are given too."""
    inputs_info = graph_inputs(os.path.join(case_dir, "model.onnx"))
    for data_set in data_sets(case_dir):
        with tempfile.TemporaryDirectory() as tmp:
            values = data_set_inputs(data_set)
            args, why = prepare_inputs(values, inputs_info, tmp)
            if args is None:
                return "unsupported", why
            if import_flags:
                args = sequence_flags(values, inputs_info) + args
            out = os.path.join(tmp, "out")
            status, why = run_tool(command(out) + args, timeout)
            if status == "pass":
                status, why = check_outputs(data_set, out)
            if status != "pass":
                return status, why
    return "pass", ""


def run_compiled(ober_compile, case_dir, timeout):
    """The case through `ober-compile --inference` and its executable."""
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "infer")
        # The executable is built for the first data set's sequence lengths.
        model = os.path.join(case_dir, "model.onnx")
        sets = data_sets(case_dir)
        flags = (sequence_flags(data_set_inputs(sets[0]), graph_inputs(model))
                 if sets else [])
        status, why = run_tool([ober_compile, model, "--inference", "-o", exe]
                               + flags, timeout)
        if status != "pass":
            return status, why
        return run_data_sets(case_dir, lambda out: [exe, "--output-dir", out],
                             timeout, import_flags=False)


def run_case(ober_run, case_dir, timeout):
    model = os.path.join(case_dir, "model.onnx")
    return run_data_sets(
        case_dir, lambda out: [ober_run, model, "--output-dir", out], timeout)


def run_both(ober_run, ober_compile, case_dir, timeout):
    """The case in ober-run, then (when it passes there) compiled."""
    result = run_case(ober_run, case_dir, timeout)
    if ober_compile is None or result[0] != "pass":
        return result, None
    return result, run_compiled(ober_compile, case_dir, timeout)


def op_types(case_dir):
    try:
        model = onnx.load(os.path.join(case_dir, "model.onnx"),
                          load_external_data=False)
    except Exception:
        return []
    return sorted({(n.domain + "." if n.domain not in ("", "ai.onnx") else "")
                   + n.op_type for n in model.graph.node})


def write_coverage(path, results, cases_ops, compiled):
    per_op = collections.defaultdict(collections.Counter)
    for (suite, name), (status, _) in results.items():
        if suite != "node":
            continue
        for op in cases_ops[(suite, name)]:
            per_op[op][status] += 1
    suites = collections.defaultdict(collections.Counter)
    for (suite, _), (status, _) in results.items():
        suites[suite][status] += 1
    lines = [
        "# ONNX conformance coverage",
        "",
        "Generated by `utils/onnx/conformance.py` from ONNX's backend test",
        "data (Debian's `libonnx-testdata`, ONNX 1.12): each model runs in",
        "`ober-run` and its outputs are compared with ONNX's expected outputs",
        f"(rtol {RTOL:g}, atol {ATOL:g}). `unsupported` means ober rejected the",
        "model with a diagnostic; `fail` would be a wrong answer.",
        "",
        "`differs` marks the few cases whose expected outputs follow a",
        "convention ober deliberately does not (see",
        "`test/onnx/expectations.txt`).",
        "",
        "| suite | cases | pass | fail | differs | unsupported |",
        "|---|---|---|---|---|---|",
    ]
    for suite in SUITES:
        c = suites[suite]
        total = sum(c.values())
        lines.append(f"| {suite} | {total} | {c['pass']} | {c['fail']} | "
                     f"{c['differs']} | {c['unsupported']} |")
    if compiled:
        c = collections.Counter(st for st, _ in compiled.values())
        lines += ["", "Every case that passes is also compiled by `ober-compile "
                  "--inference` into an executable and run on the same inputs "
                  "(`utils/onnx/conformance.py --ober-compile`):", "",
                  "| compiled | pass | fail | refused |", "|---|---|---|---|",
                  f"| {len(compiled)} | {c['pass']} | {c['fail']} | "
                  f"{c['unsupported']} |", "",
                  "A refused case needs an input's value at compile time (a "
                  "shape, axes, sizes or trip count given as an input, or an "
                  "output whose size depends on the input's values, which "
                  "`ober-run` reads from the input files), or takes a "
                  "sequence whose tensors have no static shape; each is "
                  "listed in `test/onnx/expectations.txt`."]
    lines += ["", "## Node tests by op", "",
              "An op counts in every node case whose graph contains it. "
              "`status` is `pass` when all its cases pass, `partial` when some "
              "are rejected, `unsupported` when none pass.", "",
              "| op | status | pass | fail | differs | unsupported |",
              "|---|---|---|---|---|---|"]
    for op in sorted(per_op):
        c = per_op[op]
        if c["fail"]:
            status = "fail"
        elif c["unsupported"] == 0 and c["pass"]:
            status = "pass"
        elif c["pass"]:
            status = "partial"
        else:
            status = "unsupported"
        lines.append(f"| {op} | {status} | {c['pass']} | {c['fail']} | "
                     f"{c['differs']} | {c['unsupported']} |")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ober-run", required=True)
    p.add_argument("--ober-compile",
                   help="also compile passing cases into executables")
    p.add_argument("--data-root", default=DEFAULT_ROOT)
    p.add_argument("--suites", default=",".join(SUITES))
    p.add_argument("--filter", default="", help="regex on case names")
    p.add_argument("--coverage", help="write the coverage table here")
    p.add_argument("--expected", help="expectations file (see above)")
    p.add_argument("--coverage-reference",
                   help="checked-in coverage table the new one must equal")
    p.add_argument("--min-node-pass", type=float, default=0.75)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    p.add_argument("--timeout", type=int, default=120)
    p.add_argument("--verbose", action="store_true")
    args = p.parse_args()

    cases = []
    for suite in args.suites.split(","):
        for d in sorted(glob.glob(os.path.join(args.data_root, suite, "*"))):
            if os.path.exists(os.path.join(d, "model.onnx")) and \
                    re.search(args.filter, os.path.basename(d)):
                cases.append((suite, os.path.basename(d), d))
    if not cases:
        print(f"no test cases under {args.data_root}", file=sys.stderr)
        return 1

    results, compiled, cases_ops = {}, {}, {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(run_both, args.ober_run, args.ober_compile, d,
                               args.timeout): (s, n, d)
                   for s, n, d in cases}
        for f in concurrent.futures.as_completed(futures):
            s, n, d = futures[f]
            results[(s, n)], compiled_result = f.result()
            if compiled_result is not None:
                compiled[(s, n)] = compiled_result
            cases_ops[(s, n)] = op_types(d)

    expected = {}
    if args.expected:
        with open(args.expected) as f:
            for line in f:
                fields = line.split("#")[0].split()
                if len(fields) == 2 and fields[1] in ("unsupported", "differs",
                                                      "compiled-unsupported"):
                    expected[fields[0]] = fields[1]
                elif fields:
                    print(f"bad expectation line: {line.strip()}", file=sys.stderr)
                    return 1

    problems = []
    for (suite, name), (status, why) in sorted(results.items()):
        key = f"{suite}/{name}"
        listed = expected.get(key)
        if listed == "compiled-unsupported":
            listed = None  # about the compiled run, checked below
        if status == "fail" and listed == "differs":
            status = "differs"
            results[(suite, name)] = (status, why)
        if args.verbose or status == "fail" or (status == "unsupported" and listed != "unsupported"):
            print(f"{status.upper():12} {key}: {why}")
        if status == "fail":
            problems.append(f"{key} gives a wrong answer: {why}")
        elif status == "unsupported" and args.expected and listed != "unsupported":
            problems.append(f"{key} is rejected but not listed as expected: {why}")
        elif status == "pass" and listed:
            problems.append(f"{key} passes now: remove it from {args.expected}")

    for (suite, name), (status, why) in sorted(compiled.items()):
        key = f"{suite}/{name}"
        listed = expected.get(key) == "compiled-unsupported"
        if args.verbose or status == "fail" or (status == "unsupported" and not listed):
            print(f"COMPILED {status.upper():12} {key}: {why}")
        if status == "fail":
            problems.append(f"{key} compiled gives a wrong answer: {why}")
        elif status == "unsupported" and not listed:
            problems.append(f"{key} is refused by ober-compile but not listed "
                            f"as compiled-unsupported: {why}")
        elif status == "pass" and listed:
            problems.append(f"{key} compiles now: remove it from {args.expected}")
    if compiled:
        c = collections.Counter(st for st, _ in compiled.values())
        print(f"compiled (ober-compile --inference) of the {len(compiled)} "
              f"passing cases: {c['pass']} pass, {c['fail']} fail, "
              f"{c['unsupported']} unsupported")

    totals = collections.Counter(status for status, _ in results.values())
    node = [st for (s, _), (st, _) in results.items() if s == "node"]
    node_rate = node.count("pass") / len(node) if node else 1.0
    for suite in args.suites.split(","):
        c = collections.Counter(st for (s, _), (st, _) in results.items() if s == suite)
        print(f"{suite}: {c['pass']} pass, {c['fail']} fail, "
              f"{c['differs']} differ by convention, "
              f"{c['unsupported']} unsupported of {sum(c.values())}")
    if node and node_rate < args.min_node_pass:
        problems.append(f"node pass rate {node_rate:.1%} is below "
                        f"{args.min_node_pass:.0%}")
    if args.coverage:
        write_coverage(args.coverage, results, cases_ops, compiled)
        if args.coverage_reference:
            with open(args.coverage) as a, open(args.coverage_reference) as b:
                if a.read() != b.read():
                    problems.append(f"{args.coverage_reference} is stale: copy "
                                    f"{args.coverage} over it")
    for prob in problems:
        print("PROBLEM:", prob)
    totals = collections.Counter(status for status, _ in results.values())
    print(f"onnx-conformance: {totals['pass']} passed, {totals['fail']} failed, "
          f"{totals['differs']} differ by convention, "
          f"{totals['unsupported']} unsupported")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
