"""Print, one a line, what building this project's wheel needs besides torch, scikit-build-core
and ninja: the requirements scikit-build-core would put into an isolated build environment for
pyproject.toml (for example cmake, when the project asks for a newer one than the system has).

Used by ci/install-from-source.sh and noxfile.py, which build with --no-build-isolation so that
the native library is compiled against the torch that is already installed.
"""

import os
import pathlib

from scikit_build_core.build import get_requires_for_build_wheel

os.chdir(pathlib.Path(__file__).resolve().parents[1])
for requirement in get_requires_for_build_wheel():
    print(requirement)
