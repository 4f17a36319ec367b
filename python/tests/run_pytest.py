"""CTest's entry to the pytest suite (python/CMakeLists.txt): exit 77 (skipped) when this Python
has no pytest, else pytest's own exit code."""

import sys

try:
    import pytest
except ImportError:
    print("python_api skipped: no pytest for", sys.executable, "(scripts/python-env.sh installs it)")
    sys.exit(77)

sys.exit(pytest.main([sys.argv[1], "-q", "-p", "no:cacheprovider", "-rs"]))
