"""The kernels' type tags (kernels/common.clh) as NumPy dtypes, shared by the kernel tests."""

import numpy as np

# tag -> numpy storage dtype (bfloat16 is stored as uint16 bits, bool as uint8)
STORE = {
    "float": np.float32,
    "double": np.float64,
    "half": np.float16,
    "bfloat16": np.uint16,
    "long": np.int64,
    "int": np.int32,
    "short": np.int16,
    "char": np.int8,
    "uchar": np.uint8,
    "bool": np.uint8,
}
