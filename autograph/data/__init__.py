"""Input pipelines: `ag.data.Dataset`, iterated eagerly or lowered into one while_loop node
inside a traced function (see docs/data.md)."""

from autograph.data.dataset import Dataset

__all__ = ["Dataset"]
