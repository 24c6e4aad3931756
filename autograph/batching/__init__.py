"""Batching: `ag.vmap` as a graph -> graph transform (JAX's interpreters/batching.py),
beside autodiff. api.py holds `vmap`; transform.py the walk and the rule table; one file
per family of rules (broadcasting, axes, indexing, tensor_arrays, conds, loops, nested,
lanes, refusals) and of_grad.py for vmap of a gradient; rules.py loads them all. The
forms of control flow a per-lane condition can take beside partition and compaction:
selects.py (both branches and `where`, when unobservable), amortised.py (compaction only
now and then, likewise) and lane_loops.py (one loop over the lanes, under jit_compile).
docs/vmap.md says how and what it costs.

(The package is named for the transform, not `vmap`: a subpackage `autograph.vmap` would,
once imported, replace the public function `ag.vmap` as an attribute of `autograph`, the
trap `autograph.function` avoids by importing its decorator eagerly.)"""
