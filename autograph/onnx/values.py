"""How values are typed in ONNX, and the error a graph ONNX cannot express raises: what
both the lowering walk (lower.py) and the per-primitive rules (ops.py) use."""

import numpy as np


class Unsupported(Exception):
    def __init__(self, node, why):
        super().__init__(why)
        self.node, self.why = node, why


def onnx_dtype(dtype):
    from onnx import helper
    if np.dtype(dtype) == np.dtype(object):
        raise TypeError("object dtype")
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def value_info(model, tensor, name):
    from onnx import helper
    if tensor.dtype == np.dtype(object):
        dtype = model.handle_dtypes.get(tensor)
        if dtype is None:
            raise Unsupported(tensor.node, "a TensorArray whose element dtype is unknown")
        elem = helper.make_tensor_type_proto(onnx_dtype(dtype), None)
        return helper.make_value_info(name, helper.make_sequence_type_proto(elem))
    shape = None if tensor.shape is None else list(tensor.shape)
    return helper.make_tensor_value_info(name, onnx_dtype(tensor.dtype), shape)
