"""The object table of a saved model. Writing: pruning what holds no Variable and no
function, and renumbering what is reachable. Reading: rebuilding objects, functions,
Variables, containers and plain values, each shared object once, every reference checked."""

from autograph.saved_model import format as fmt
from autograph.saved_model.format import SavedModelError
from autograph.saved_model.restored import RestoredFunction, RestoredObject


# -- writing ---------------------------------------------------------------------------------------

def prune(objects):
    """Drop the children that hold no Variable and no function (a logger, a config
    object, a list of numbers): the tree keeps what a loaded model can use, and plain
    values only as attributes of kept objects. Records left unreferenced stay (inert)."""
    holds = {}

    def visit(i, stack=()):
        if i in holds:
            return holds[i]
        if i in stack:
            return False               # a cycle: decided by the other paths
        rec = objects[i]
        kind = rec["kind"]
        if kind in ("variable", "function"):
            holds[i] = True
            return True
        if kind == "value":
            return False
        kids = refs(rec)
        found = [visit(j, stack + (i,)) for j in kids]
        holds[i] = any(found) or bool(rec.get("variables"))
        return holds[i]

    for i in range(len(objects)):
        visit(i)
    for rec in objects:
        kind = rec["kind"]
        if kind == "object":
            rec["children"] = {n: j for n, j in rec["children"].items()
                               if holds.get(j) or objects[j]["kind"] == "value"}
        elif kind == "dict":
            rec["items"] = [[k, j] for k, j in rec["items"] if holds.get(j)]
        elif kind in ("list", "tuple"):
            rec["items"] = [j for j in rec["items"] if holds.get(j)]


def compact(objects, roots):
    """The records reachable from `roots`, renumbered in the order first reached."""
    order, index = [], {}
    todo = list(roots)
    while todo:
        i = todo.pop(0)
        if i in index:
            continue
        index[i] = len(order)
        order.append(i)
        rec = objects[i]
        todo.extend(refs(rec))
    out = []
    for i in order:
        rec = dict(objects[i])
        kind = rec["kind"]
        if kind == "object":
            rec["children"] = {n: index[j] for n, j in rec["children"].items()}
        elif kind == "dict":
            rec["items"] = [[k, index[j]] for k, j in rec["items"]]
        elif kind in ("list", "tuple"):
            rec["items"] = [index[j] for j in rec["items"]]
        out.append(rec)
    return out, index


def refs(rec):
    kind = rec["kind"]
    if kind == "object":
        return list(rec["children"].values())
    if kind == "dict":
        return [j for _, j in rec["items"]]
    if kind in ("list", "tuple"):
        return list(rec["items"])
    return []


# -- reading ---------------------------------------------------------------------------------------

class TreeBuilder:
    """Rebuilds the object table (shared objects once; references checked)."""

    def __init__(self, records, functions, variables, limits):
        self.records, self.functions, self.variables = records, functions, variables
        self.limits = limits
        self.built = {}

    def object(self, i, depth=0):
        if type(i) is not int or not 0 <= i < len(self.records):
            raise SavedModelError(f"object reference {fmt._show(i)} is out of range")
        if i in self.built:
            return self.built[i]
        if depth > self.limits.max_nesting * 4:
            raise SavedModelError("the object tree nests too deep")
        rec = self.records[i]
        where = f"object {i}"
        kind = rec.get("kind") if type(rec) is dict else None
        if kind == "value":
            out = fmt.decode(rec.get("value"), where, self.limits)
        elif kind == "variable":
            j = rec.get("variable")
            if type(j) is not int or not 0 <= j < len(self.variables):
                raise SavedModelError(f"{where}: Variable reference out of range")
            out = self.variables[j]
        elif kind == "function":
            idx = rec.get("concrete")
            if type(idx) is not list or not all(
                    type(j) is int and 0 <= j < len(self.functions) for j in idx):
                raise SavedModelError(f"{where}: function references out of range")
            out = RestoredFunction(str(rec.get("name", "function")),
                                   [self.functions[j] for j in idx])
        elif kind in ("list", "tuple"):
            items = rec.get("items")
            if type(items) is not list:
                raise SavedModelError(f"{where}: 'items' must be a list")
            out = [self.object(j, depth + 1) for j in items]
            if kind == "tuple":
                out = tuple(out)
        elif kind == "dict":
            items = rec.get("items")
            if type(items) is not list or not all(
                    type(x) is list and len(x) == 2 and type(x[0]) is str for x in items):
                raise SavedModelError(f"{where}: 'items' must be [key, object] pairs")
            out = {}
            self.built[i] = out
            for k, j in items:
                out[k] = self.object(j, depth + 1)
        elif kind == "object":
            children = rec.get("children")
            if type(children) is not dict:
                raise SavedModelError(f"{where}: 'children' must be an object")
            name = rec.get("module_name")
            out = RestoredObject(str(rec.get("class", "object")),
                                 name if type(name) is str else None)
            self.built[i] = out       # before its children: a cycle finds it
            order = rec.get("variables")
            if order is not None:
                if type(order) is not list or not all(
                        type(j) is int and 0 <= j < len(self.variables) for j in order):
                    raise SavedModelError(f"{where}: Variable references out of range")
                out.__dict__["_variables"] = [self.variables[j] for j in order]
            for name, j in children.items():
                child = self.object(j, depth + 1)
                if name == "__call__" and not isinstance(child, RestoredFunction):
                    raise SavedModelError(f"{where}: its __call__ is a "
                                          f"{type(child).__name__}, not a saved function")
                out._children[name] = child
                if name != "__call__":
                    out.__dict__[name] = child
        else:
            raise SavedModelError(f"{where}: unknown object kind {fmt._show(kind)}")
        self.built[i] = out
        return out
