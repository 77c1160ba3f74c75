"""The console scripts: ``safepin`` and ``safepin-smoke`` (and ``python -m
safepin``). Each replaces itself with the packaged launcher, so options,
exit status and signals are the launcher's own (``safepin --help``)."""
import os
import sys

from . import _packaged


def _exec(argv0, path, args):
    try:
        os.execv(path, [argv0] + args)
    except OSError as e:
        sys.stderr.write("%s: cannot run %s: %s\n" % (os.path.basename(argv0), path, e.strerror))
        return 126


def main(args=None):
    """safepin [options] [--] program [args...]: the program with the
    packaged libsafepin.so preloaded."""
    args = sys.argv[1:] if args is None else list(args)
    launcher = _packaged("bin", "safepin")
    if not os.access(launcher, os.X_OK):   # an installer that dropped the mode
        return _exec("/bin/sh", "/bin/sh", [launcher] + args)
    return _exec(launcher, launcher, args)


def smoke(args=None):
    """safepin-smoke [options] [--] prog args [-- prog args]...: each program
    under the packaged launcher in strict mode, a table and a JUnit file."""
    args = sys.argv[1:] if args is None else list(args)
    script = _packaged("bin", "safepin-smoke")
    return _exec(sys.executable, sys.executable, [script] + args)
