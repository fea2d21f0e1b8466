"""Finding and running ober's C++ tools (ober-opt, ober-run).

The package drives the tools as subprocesses: Debian ships no MLIR Python
bindings. A tool that fails raises OberError carrying its message.
"""
import os
import shutil
import subprocess


class OberError(RuntimeError):
    """A tool (or the export before it) failed; `message` is its own text."""

    def __init__(self, message, command=None):
        super().__init__(message)
        self.message = message
        self.command = command


def _candidates():
    env = os.environ.get("OBER_BIN")
    if env:
        yield env
    here = os.path.dirname(os.path.abspath(__file__))
    # Used from the source tree: python/ober -> build/bin.
    yield os.path.normpath(os.path.join(here, "..", "..", "build", "bin"))


def tool(name):
    """The path of tool `name`: $OBER_BIN, the build tree, or $PATH."""
    for d in _candidates():
        path = os.path.join(d, name)
        if os.access(path, os.X_OK):
            return path
    found = shutil.which(name)
    if found:
        return found
    raise OberError(
        f"cannot find '{name}': build ober (utils/setup.sh) and set OBER_BIN "
        "to its build/bin, or put the tools on PATH")


def run_command(command, cwd=None):
    """Runs `command` (a program and its arguments); returns (stdout,
    stderr) or raises OberError with what it printed."""
    command = [str(a) for a in command]
    proc = subprocess.run(command, capture_output=True, text=True, cwd=cwd)
    if proc.returncode != 0:
        message = proc.stderr.strip() or proc.stdout.strip() or (
            f"{command[0]} exited with status {proc.returncode}")
        raise OberError(message, command)
    return proc.stdout, proc.stderr


def run(name, args, cwd=None):
    """Runs tool `name`; returns (stdout, stderr) or raises OberError."""
    return run_command([tool(name)] + list(args), cwd=cwd)


def supports_torchscript():
    """Whether ober-opt was built with the TorchScript importer."""
    try:
        out, _ = run("ober-translate", ["--help"])
    except OberError:
        return False
    return "--import-torchscript" in out
