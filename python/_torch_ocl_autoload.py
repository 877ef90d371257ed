"""torch-ocl's ``torch.backends`` entry point: ``import torch`` loads the ``ocl`` backend.

It lives outside the torch_ocl package so that a backend that cannot load (for example under a
torch version this build does not support) becomes a warning instead of making ``import torch``
itself fail; ``import torch_ocl`` still raises the full error.
"""

import warnings


def load() -> None:
    try:
        import torch_ocl  # noqa: F401
    except ImportError as error:
        warnings.warn(
            f"torch-ocl is installed but the ocl device is unavailable: {error}",
            RuntimeWarning,
            stacklevel=2,
        )
