"""rapid from Python: run experiments and get their results as dicts.

    import rapid
    results = rapid.run("examples/quickstart.rapid", set={"base.parallel.tp": 4})
    for r in results:
        print(r["experiment"], r["label"], r.get("step_time_s"))

Each result is the JSON object `rapidc FILE --format=json` prints for a
point (docs/simulation.md lists its keys). The module loads librapid.so,
the C interface of compiler/include/rapid/API/rapid.h, with ctypes: from
$RAPID_LIBRARY, else from build/lib beside this checkout.
"""
import ctypes
import json
import os

__all__ = ["run", "version", "RapidError"]


class RapidError(Exception):
    """The input had errors; `diagnostics` is what rapidc would print, `results` what ran."""

    def __init__(self, diagnostics, results=None):
        super().__init__(diagnostics.strip() or "rapid failed")
        self.diagnostics = diagnostics
        self.results = results or []


def _library_path():
    if os.environ.get("RAPID_LIBRARY"):
        return os.environ["RAPID_LIBRARY"]
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, "..", "..", "build", "lib", "librapid.so")


_lib = None


def _load():
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(_library_path())
        lib.rapid_version.restype = ctypes.c_char_p
        lib.rapid_run.restype = ctypes.c_void_p  # freed with rapid_free
        lib.rapid_run.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t,
                                  ctypes.c_char_p, ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p),
                                  ctypes.POINTER(ctypes.c_int)]
        lib.rapid_free.argtypes = [ctypes.c_void_p]
        _lib = lib
    return _lib


def version():
    return _load().rapid_version().decode()


def _take(lib, pointer):
    if not pointer:
        return ""
    text = ctypes.string_at(pointer).decode()
    lib.rapid_free(pointer)
    return text


def run(path=None, source=None, set=None, stdlib=None, jobs=1, check=True):
    """Runs every point of the file `path`, or of `source` text (named `path`
    in diagnostics when both are given), with `set` overrides ({"exp.field":
    value} or ["exp.field=value", ...], as rapidc --set), and returns one dict
    per point. With `check`, raises RapidError when rapidc would exit 1 (an
    error, a failed point, an experiment that does not fit)."""
    lib = _load()
    items = set.items() if isinstance(set, dict) else ((s, None) for s in (set or []))
    overrides = [f"{k}={v}" if v is not None else k for k, v in items]
    array = (ctypes.c_char_p * max(1, len(overrides)))(*[o.encode() for o in overrides])
    diagnostics, status = ctypes.c_void_p(), ctypes.c_int()
    out = lib.rapid_run(path.encode() if path else None, source.encode() if source is not None else None, array,
                        len(overrides), stdlib.encode() if stdlib else None, jobs, ctypes.byref(diagnostics),
                        ctypes.byref(status))
    report = _take(lib, diagnostics.value)
    results = [json.loads(line) for line in _take(lib, out).splitlines() if line]
    if check and status.value != 0:
        raise RapidError(report, results)
    return results
