# Runs every GoogleTest binary under build/test/unit, one lit test per case.
import os
import lit.formats

config.name = "rapid-unit"
config.suffixes = []
config.test_source_root = os.path.join(config.rapid_obj_root, "test", "unit")
config.test_exec_root = config.test_source_root
config.test_format = lit.formats.GoogleTest(".", "Tests")

if getattr(config, "rapid_sanitized", False):
    import sys
    sys.path.insert(0, os.path.join(config.rapid_src_root, "test"))
    from sanitizers import sanitizer_environment
    config.environment.update(sanitizer_environment(config.rapid_src_root))
