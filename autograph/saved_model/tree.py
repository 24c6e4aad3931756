"""Rebuilding the object table of a saved model: objects, functions, Variables, containers
and plain values, each shared object once, every reference checked."""

from autograph.saved_model import format as fmt
from autograph.saved_model.format import SavedModelError
from autograph.saved_model.restored import RestoredFunction, RestoredObject


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
                out._children[name] = child = self.object(j, depth + 1)
                if name != "__call__":
                    out.__dict__[name] = child
        else:
            raise SavedModelError(f"{where}: unknown object kind {fmt._show(kind)}")
        self.built[i] = out
        return out
