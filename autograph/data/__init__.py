"""Input pipelines: `ag.data.Dataset`, iterated eagerly or lowered into one while_loop node
inside a traced function (see docs/data.md). The constants are tf.data's."""

from autograph.data.counts import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from autograph.data.dataset import Dataset

__all__ = ["Dataset", "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY"]
