"""The error of the OpenCL code generator: what it does not generate, and the way out."""

from __future__ import annotations

WAY_OUT = (
    "Use torch.compile(..., backend='aot_eager') to run this model on ocl without generated "
    "kernels (its ops run one by one, natively)."
)


class OclCodegenError(NotImplementedError):
    """Something the OpenCL code generator does not generate (yet)."""

    def __init__(self, what: str) -> None:
        super().__init__(f"torch-ocl: torch.compile's OpenCL code generator {what}. {WAY_OUT}")
