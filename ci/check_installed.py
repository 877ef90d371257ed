"""Fail unless `torch_ocl` would be imported from the active environment's site-packages.

Tests must exercise the installed wheel, never python/torch_ocl from the source tree. Finds the
package without importing it, so that it works before any device exists.
"""

import importlib.util
import pathlib
import sys

spec = importlib.util.find_spec("torch_ocl")
if spec is None or spec.origin is None:
    sys.exit("torch_ocl is not installed in this environment")
origin = pathlib.Path(spec.origin).resolve()
print(f"torch_ocl from {origin}")
if not origin.is_relative_to(pathlib.Path(sys.prefix).resolve()):
    sys.exit(f"torch_ocl is imported from {origin}, outside this environment ({sys.prefix})")
