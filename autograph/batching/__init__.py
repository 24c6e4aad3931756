"""vmap: batching as a graph -> graph transform (JAX's interpreters/batching.py), beside
autodiff. api.py holds `ag.vmap`; transform.py the walk and the rule table; one file per
family of rules (broadcasting, axes, indexing, conds, loops, lanes, refusals); rules.py
loads them all. docs/vmap.md says how and what it costs."""
