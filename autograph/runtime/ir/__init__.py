"""The graph IR: Tensor, Graph/Node, the primitive table, nest, shapes and dtypes."""
