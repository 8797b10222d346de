"""The sanitizer run-time options every suite of the sanitized tree runs under
(docs/testing.md). Imported by lit.cfg.py and unit/lit.cfg.py."""
import os


def sanitizer_environment(src_root):
    """Any report aborts the process (SIGABRT), so `not rapidc ...` and
    FileCheck cannot mistake it for an ordinary exit status 1."""
    supp = os.path.join(src_root, "test", "fuzz", "lsan.supp")
    return {
        "ASAN_OPTIONS": "abort_on_error=1:detect_leaks=1:check_initialization_order=1:"
                        "detect_stack_use_after_return=1:strict_init_order=1",
        "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:abort_on_error=1",
        "LSAN_OPTIONS": "suppressions=" + supp,
        "ASAN_SYMBOLIZER_PATH": "/usr/lib/llvm-19/bin/llvm-symbolizer",
    }
