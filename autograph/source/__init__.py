"""autograph.source: Python source as data (the compiler's front end).

API summary for converter authors (details in each module's docstring):

anno         getanno(node, key, default=...), setanno, hasanno, delanno, copyanno(from, to, key),
             keys(node), dup(tree, {old: new}), clear(tree, *keys_or_enums),
             copy_origin(from_node, nodes, overwrite=False).
             Keys: anno.Basic (QN, ORIGIN, SKIP_PROCESSING, GENERATED, ...),
                   anno.Static (SCOPE, BODY_SCOPE, ORELSE_SCOPE, ITERATE_SCOPE, COND_SCOPE,
                   ARGS_SCOPE, LIVE_VARS_IN/OUT, DEFINED_VARS_IN, MAYBE_DEFINED_VARS_IN, ...).
qual_names   QN('a'), QN(QN('a'), attr='b'), QN(QN('a'), subscript=QN('i') or Literal(0));
             .is_simple() .is_composite() .parent .root .owner_set .support_set .ast(ctx=None)
             str(qn) == 'a.b' / 'a[i]'; from_str('a.b'); resolve(tree) sets anno.Basic.QN.
parser       parse_entity(fn) -> (node, source, EntityInfo): gast FunctionDef (decorators
             removed) or gast.Lambda, every node with anno.Basic.ORIGIN (user's file/line);
             raises errors.ConversionError when there is no source (builtins, REPL, ...).
             parse_str(code) -> gast.Module, parse_expression(code), unparse(node_or_list).
templates    replace(template, origin=None, **repl) -> [stmt], replace_as_expression(...);
             placeholders are names; values: str/QN (a name), gast expr, statements (spliced
             where the placeholder is a statement), lists of names (spliced into parameter
             lists, call args, tuples, global/nonlocal; a tuple elsewhere). fix_contexts(nodes).
             moved(node): a replacement the caller gives up, used in place (not copied).
naming       Namer.for_function(fn_node, fn.__globals__).new_symbol('loop_body') -> fresh name.
loader       load(node, original_fn, extra={'ag__': operators}, name=None)
             -> (new_fn, source_text, filename). Live user globals and closure cells;
             new_fn.__autograph_original__ is the original function.
origin       LineLocation(filename, lineno, col_offset, source_line, function_name);
             lookup(filename, lineno), origin_map(filename), is_generated(filename),
             user_location() (innermost converted frame -> the user's line),
             rewrite_traceback(exc), `with origin.user_frames(): ...` and the decorator
             @origin.boundary (re-raise with the user's frames in a note, autograph's own
             frames dropped; ag.config.show_internal_frames(True) or AUTOGRAPH_TRACEBACK=full
             keeps them); user_traceback(exc) at ag.function's entry points: the traceback
             itself shows the user's lines (converted code mapped, a failing graph node as
             the user's line that made it).
traversal    NodeVisitor / NodeTransformer: drop-in for gast's (visit_<Class>, generic_visit,
             a transformer's visit returns None / a node / a list), several times faster:
             method lookup cached per class, fields read directly, context/operator leaves
             not entered; a visitor whose visit_ methods are all for statements (and which
             keeps the default generic_visit) does not enter expressions at all.
             walk(node_or_list, leaves=True) (source order), children(node).
bridge       to_gast(ast_node, origin=(filename, lines, fn_name)) / to_ast(gast_node): the
             trees gast.ast_to_gast / gast_to_ast build, faster; to_gast sets ORIGIN too.
             (parser.parse_entity / parse_str / unparse use them.)
unparser     unparse(gast_node) -> the text ast.unparse gives for the same tree, written
             straight from gast (parser.unparse uses it).

Speed notes: the origin map of a generated file is built on its first lookup (errors,
tracebacks), not at load; templates are parsed once, each template node's copy plan is
worked out once, and parts of the replaced node are moved in rather than copied.

Note: Python's default excepthook reads source files from disk, so it prints no text for
generated frames ('<autograph: f at file.py:12>'); the note carries the user's lines.
traceback.print_exc, IPython, pytest, pdb and inspect.getsource read linecache and show them.
"""
