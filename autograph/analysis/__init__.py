"""autograph.analysis: control flow and dataflow over gast function trees.

API summary for converter authors (run them in this order; each says what it needs):

    from autograph.analysis import activity, cfg, liveness, reaching_definitions
    activity.resolve(fn_node)              # also sets anno.Basic.QN on symbols
    graphs = cfg.build_all(fn_node)        # {FunctionDef/Lambda node: cfg.Graph}
    liveness.resolve(fn_node, graphs)
    reaching_definitions.resolve(fn_node, graphs)

cfg          build(fn) -> Graph(.entry, .exit, .error, .nodes, .index[ast] -> Node,
             .stmt_nodes/.stmt_prev/.stmt_next[stmt]); Node(.ast_node, .next, .prev,
             .raises). Nested defs/lambdas are opaque nodes with their own Graph
             (build_all). A for loop's target is its own node at the start of the body;
             `except E as e` ends with a HandlerExit node (e is unbound there).
activity     Scope(.read, .modified, .bound, .deleted, .params, .globals, .nonlocals,
             .free, .local_names), sets of QN. Annotates Static.SCOPE (every statement),
             BODY_SCOPE / ORELSE_SCOPE (if/while/for/try/with/def/lambda/IfExp),
             COND_SCOPE (if/while/IfExp), ITERATE_SCOPE (for target), ARGS_SCOPE
             (def/lambda params), FINALBODY_SCOPE / HANDLERS_SCOPE (try), NODE_SCOPE (what
             each CFG node does).
liveness     Static.LIVE_VARS_IN / LIVE_VARS_OUT (frozenset of QN) on every statement; for
             compound statements OUT is what is live after the whole statement. What a
             handler/finally reads is live before each statement that may raise into it;
             where a name bound to a local closure is live, so is what the closure reads.
reaching_definitions
             Static.DEFINED_VARS_IN (defined on every path) and MAYBE_DEFINED_VARS_IN (on
             some path) on every statement.

After a transformation, drop stale facts with `anno.clear(tree, anno.Static)` and re-run.
"""
