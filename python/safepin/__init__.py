"""safepin for Python environments: libsafepin.so, its launchers and a tiny API.

The wheel (``make wheel``, scripts/make-wheel) lays the package out as::

    safepin/__init__.py     this file: library_path(), read_report()
    safepin/cli.py          the ``safepin`` and ``safepin-smoke`` console scripts
    safepin/__main__.py     ``python -m safepin``, the same as ``safepin``
    safepin/bin/            the launchers, as ``make install`` writes them
    safepin/lib/            libsafepin.so and what is installed next to it:
                            simhip/ and simcuda/, the simulated devices of --sim

The launchers are the project's own (scripts/safepin, scripts/safepin-smoke):
the console scripts run them, and they find the library in safepin/lib/
relative to themselves, as an installed launcher finds LIBDIR.
"""
import json
import os

__all__ = ["__version__", "library_path", "read_report"]

# scripts/make-wheel writes the version from VERSION here.
__version__ = "@VERSION@"

_HERE = os.path.dirname(os.path.abspath(__file__))


def _packaged(*parts):
    path = os.path.join(_HERE, *parts)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            "safepin: %s is missing from the installed package (reinstall the wheel)" % path)
    return path


def library_path():
    """The absolute path of the packaged libsafepin.so, for LD_PRELOAD."""
    return _packaged("lib", "libsafepin.so")


def read_report(path):
    """The end-of-run JSON report that SAFEPIN_OPTIONS=report=PATH (or
    ``safepin --report PATH``) wrote, as a dict: "version", "exit_status",
    "violations_total", "counters", "codes", "release_latency_us",
    "violations" (docs/report.md). A path with %p names one
    report per process: give the path of one of them (glob.glob finds them).

    Raises OSError when the file cannot be read, ValueError when it is not
    a safepin report.
    """
    with open(path, encoding="utf-8") as f:
        try:
            report = json.load(f)
        except ValueError as e:
            raise ValueError("%s: not a safepin report (%s)" % (path, e)) from None
    if not isinstance(report, dict) or report.get("tool") != "safepin":
        raise ValueError("%s: not a safepin report (no \"tool\": \"safepin\")" % path)
    return report
