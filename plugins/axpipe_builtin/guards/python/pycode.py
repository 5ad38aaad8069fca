"""Python code under test, read from the AST: functions with the literals they return and
the literals their branches compare inputs with, and every exception handler."""

from __future__ import annotations

import ast

from .. import focus
from ..model import Branch, FunctionFacts, Handler, Lit, Marker, ModuleFacts, Return, ScopeMarker, Table
from . import pyhooks, pytests
from .pyatoms import broad, dotted, literal_of, literals_in

_LOGGERS = ("log", "logger", "logging", "LOG", "LOGGER", "_log", "_logger", "warnings", "traceback", "print",
            "sys.stderr.write", "sys.stdout.write")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_BLOCKS = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
           ast.With, ast.AsyncWith, ast.Try, ast.TryStar, ast.ExceptHandler)


_PARSED: dict[tuple[int, int], tuple[str, ast.Module, bool]] = {}


def parse(text: str, lines: set[int] | None) -> tuple[ast.Module, bool]:
    """The syntax tree of ``text``, of only the top-level definitions holding ``lines`` when
    that is worth it (:mod:`.focus`), and whether it is partial. Raises SyntaxError. The last
    few are kept: :func:`sources` and :func:`extract` read the same text one after the other."""
    key = (id(text), hash(frozenset(lines)) if lines is not None else 0)
    cached = _PARSED.get(key)
    if cached is not None and cached[0] is text:
        return cached[1], cached[2]
    keep = focus.python_lines(text, lines) if lines is not None else None
    tree: ast.Module | None = None
    if keep is not None and focus.worth_it(text, keep):
        try:
            tree = ast.parse(focus.sparse(text, keep))
        except SyntaxError:
            tree = None  # the layout misled the focus (a string in column 0): read it whole
    partial = tree is not None
    if tree is None:
        tree = ast.parse(text)
    if len(_PARSED) > 8:
        _PARSED.clear()
    _PARSED[key] = (text, tree, partial)
    return tree, partial


def sources(text: str, lines: set[int] | None) -> dict[str, str]:
    """Each function's and test's text (decorators included) by qualified name."""
    tree, _partial = parse(text, lines)
    rows = text.split("\n")
    found: dict[str, str] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
                name = prefix + node.name
                found[name] = "\n".join(rows[first - 1:node.end_lineno or node.lineno])
                visit(node.body, name + ".")

    visit(tree.body, "")
    return found


def extract(text: str, path: str, *, test_file: bool, lines: set[int] | None = None,
            unchanged: frozenset[str] = frozenset()) -> ModuleFacts:
    """Everything the guards compare in one Python file; with ``lines``, only in the
    top-level definitions that hold the hunks (:mod:`.focus`), and in depth only in those
    not named in ``unchanged`` (the same on both sides). Raises SyntaxError."""
    tree, partial = parse(text, lines)
    facts = ModuleFacts(partial=partial)
    if test_file:
        pytests.extract_tests(tree, path, facts, unchanged, text.split("\n"))
        facts.shadowed = pytests.shadowed(text)
        if path.rsplit("/", 1)[-1] == "conftest.py":
            _collect_ignore(tree, facts)
    # hooks may live in any plugin module (`-p name`, `pytest_plugins`, an entry point)
    pyhooks.extract_hooks(tree, facts, conftest=path.rsplit("/", 1)[-1] == "conftest.py")
    _Walker(facts, text.split("\n"), unchanged, code=not test_file).visit(tree)
    for statement in tree.body:  # data outside tests: a table of cases, a constant
        if isinstance(statement, ast.Assign | ast.AnnAssign):
            facts.context_literals.update(literals_in(statement))
    facts.needs_whole = facts.partial and any(marker.scope == "module" for marker in facts.scope_markers)
    return facts


def _collect_ignore(tree: ast.Module, facts: ModuleFacts) -> None:
    """``collect_ignore = [...]`` in a conftest.py: files pytest will not collect."""
    for statement in tree.body:
        value: ast.expr | None
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, ast.AugAssign | ast.AnnAssign):
            targets, value = [statement.target], statement.value
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name) and target.id in ("collect_ignore", "collect_ignore_glob"):
                entries = [ast.unparse(item) for item in value.elts] if isinstance(
                    value, ast.List | ast.Tuple) else ([ast.unparse(value)] if value is not None else [])
                for entry in entries:
                    facts.scope_markers.append(ScopeMarker(
                        "conftest", Marker("deselect", statement.lineno, f"{target.id} += {entry}"), [entry]))


class _Walker(ast.NodeVisitor):
    def __init__(self, facts: ModuleFacts, rows: list[str], unchanged: frozenset[str], *, code: bool = True) -> None:
        self.facts = facts
        self.code = code  # code under test: its returns, branches and tables (a test file's are not judged)
        self.rows = rows
        self.unchanged = unchanged
        self.scope: list[str] = []
        self._optional_import: dict[int, bool] = {}
        self.tables: dict[str, Table] = {}
        self._falls_back: dict[int, bool] = {}
        self._after: dict[int, list[ast.stmt]] = {}

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if ".".join([*self.scope, node.name]) in self.unchanged:
            self.facts.definitions.add(node.name)  # the same on both sides: nothing to compare
            return
        self.scope.append(node.name)
        name = ".".join(self.scope)
        arguments = node.args
        params = [arg.arg for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
        if arguments.vararg:
            params.append(arguments.vararg.arg)
        function = FunctionFacts(name, node.name, node.lineno, self._source(node) if self.code else "", params)
        self.facts.definitions.add(node.name)
        if self.code:
            self._body(node.body, function, top=True)
            function.tables = self._tables(node)
        self.facts.functions[name] = function
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def _tables(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[Table]:
        """The literal dicts ``node`` builds or reads by name from the module."""
        found: list[Table] = []
        for child in _walk_local(node):
            if isinstance(child, ast.Dict):
                table = _table(child)
                if table is not None:
                    found.append(table)
            elif isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load) and child.id in self.tables:
                found.append(self.tables[child.id])
        return found

    def visit_Module(self, node: ast.Module) -> None:
        for statement in node.body:  # module-level tables, for the functions that read them
            if isinstance(statement, ast.Assign | ast.AnnAssign) and isinstance(statement.value, ast.Dict):
                table = _table(statement.value)
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                for target in targets:
                    if table is not None and isinstance(target, ast.Name):
                        self.tables[target.id] = table
        self.generic_visit(node)

    def _source(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
        """The function as written, to tell whether the change touched it (cheaper than a dump)."""
        return "\n".join(self.rows[node.lineno - 1:node.end_lineno or node.lineno])

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.facts.definitions.add(node.name)
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    def _body(self, statements: list[ast.stmt], function: FunctionFacts, *, top: bool) -> None:
        """Returns and branches of a function, not descending into nested functions."""
        for statement in statements:
            if isinstance(statement, _SCOPES):
                continue
            if isinstance(statement, ast.Return):
                value = literal_of(statement.value) if statement.value is not None else ("none", None)
                function.returns.append(Return(statement.lineno, ast.dump(statement), ast.unparse(statement),
                                               value, top))
            if isinstance(statement, ast.If):
                function.branches.append(_branch(statement, function.params))
            for field in ("body", "orelse", "finalbody", "handlers"):
                children = getattr(statement, field, None)
                if isinstance(children, list):
                    nested = [child.body if isinstance(child, ast.ExceptHandler) else [child] for child in children]
                    self._body([item for group in nested for item in group if isinstance(item, ast.stmt)],
                               function, top=False)
            if isinstance(statement, ast.Match):
                for case in statement.cases:
                    self._body(case.body, function, top=False)

    def generic_visit(self, node: ast.AST) -> None:
        if not isinstance(node, _BLOCKS):
            super().generic_visit(node)
            return
        # what runs after each `try`, up to the end of its function (leaving the blocks around
        # it): a handler that lets that code compute the result another way falls back
        outer = [] if isinstance(node, _SCOPES) else self._after.get(id(node), [])
        for name in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(node, name, None)
            if isinstance(block, list):
                for index, statement in enumerate(block):
                    if isinstance(statement, ast.stmt | ast.ExceptHandler):
                        self._after[id(statement)] = [*block[index + 1:], *outer]
        super().generic_visit(node)

    def visit_Try(self, node: ast.Try | ast.TryStar) -> None:
        # `try: import x` / `except ImportError:` makes a dependency optional: the language's idiom
        imports = any(isinstance(statement, ast.Import | ast.ImportFrom) for statement in node.body)
        returns = bool(node.body) and isinstance(node.body[-1], ast.Return)
        following = self._after.get(id(node), [])
        computes = any(not (isinstance(statement, ast.Return) and (
            statement.value is None or literal_of(statement.value) is not None)) for statement in following)
        for handler in node.handlers:
            self._optional_import[id(handler)] = imports
            self._falls_back[id(handler)] = returns and computes
        self.generic_visit(node)

    visit_TryStar = visit_Try

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        types = []
        if node.type is not None:
            items = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
            types = [dotted(item) or ast.unparse(item) for item in items]
        body = node.body
        reraises = any(isinstance(child, ast.Raise) for statement in body for child in _walk_local(statement))
        head = "except" + (f" {ast.unparse(node.type)}" if node.type is not None else "") + \
            (f" as {node.name}" if node.name else "") + ":"
        self.facts.handlers.append(Handler(
            line=node.lineno, function=".".join(self.scope),
            key=f"{'.'.join(self.scope)}|{head}|{node.lineno}",
            text=f"{head} {'; '.join(ast.unparse(statement) for statement in body)}"[:120],
            types=types, reraises=reraises, discards=all(_does_nothing(statement) for statement in body),
            quiet=all(_leaves(statement) or _logs(statement) for statement in body), broad=broad(types),
            bare=node.type is None, idiom=_idiom(types, self._optional_import.get(id(node), False)),
            falls_back=self._falls_back.get(id(node), False) and all(_does_nothing(statement) for statement in body)))
        self.generic_visit(node)

    def _with(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            call = item.context_expr
            if isinstance(call, ast.Call) and dotted(call.func).rsplit(".", 1)[-1] == "suppress":
                types = [dotted(arg) or ast.unparse(arg) for arg in call.args]
                imports = any(isinstance(statement, ast.Import | ast.ImportFrom) for statement in node.body)
                self.facts.handlers.append(Handler(
                    line=node.lineno, function=".".join(self.scope),
                    key=f"{'.'.join(self.scope)}|{ast.unparse(call)}|{node.lineno}",
                    text=f"with {ast.unparse(call)}:", types=types, discards=True, broad=broad(types),
                    suppress=True, idiom=_idiom(types, imports)))
        self.generic_visit(node)

    visit_With = _with
    visit_AsyncWith = _with


def _table(node: ast.Dict) -> Table | None:
    """A dict whose keys and values are all literals, as a :class:`Table`; None otherwise."""
    pairs: list[tuple[Lit, Lit]] = []
    for key, value in zip(node.keys, node.values, strict=True):
        if key is None:
            return None
        pair = (literal_of(key), literal_of(value))
        if pair[0] is None or pair[1] is None:
            return None
        pairs.append((pair[0], pair[1]))
    return Table(node.lineno, ast.unparse(node)[:120], pairs) if pairs else None


_END_OF_ITERATION = {"StopIteration", "StopAsyncIteration", "GeneratorExit"}
_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}


def _idiom(types: list[str], imports: bool) -> str:
    """Why discarding these errors is the language's idiom rather than hiding a failure: the
    end of an iteration (``suppress(StopIteration)`` closing a generator), a dependency
    made optional (``except ImportError`` around an import). '' when it is not."""
    names = {name.rsplit(".", 1)[-1] for name in types}
    if names and names <= _END_OF_ITERATION:
        return "the end of an iteration"
    if names and names <= _IMPORT_ERRORS and imports:
        return "an optional import"
    return ""


def _walk_local(node: ast.AST) -> list[ast.AST]:
    found = [node]
    for child in ast.iter_child_nodes(node):
        if not isinstance(child, _SCOPES):
            found.extend(_walk_local(child))
    return found


def _does_nothing(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Pass) or (
        isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant))  # `...` or a string


def _leaves(statement: ast.stmt) -> bool:
    """Does nothing, or leaves with nothing learned: continue, break, return a constant."""
    if _does_nothing(statement) or isinstance(statement, ast.Continue | ast.Break):
        return True
    return isinstance(statement, ast.Return) and (statement.value is None or literal_of(statement.value) is not None)


def _logs(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) and dotted(
        statement.value.func).startswith(_LOGGERS)


def _branch(node: ast.If, params: list[str]) -> Branch:
    compared: list[tuple[str, Lit]] = []
    parts = node.test.values if isinstance(node.test, ast.BoolOp) else [node.test]
    for part in parts:
        if not isinstance(part, ast.Compare) or len(part.ops) != 1:
            continue
        left, op, right = part.left, part.ops[0], part.comparators[0]
        if literal_of(left) is not None:
            left, right = right, left
        root = left
        while isinstance(root, ast.Attribute | ast.Subscript):
            root = root.value
        if not isinstance(root, ast.Name) or root.id not in params:
            continue
        if isinstance(op, ast.Eq | ast.Is):
            value = literal_of(right)
            if value is not None:
                compared.append((ast.unparse(left), value))
        elif isinstance(op, ast.In) and isinstance(right, ast.Tuple | ast.List | ast.Set):
            compared.extend((ast.unparse(left), value) for value in map(literal_of, right.elts) if value)
    returns = [value for statement in node.body for child in _walk_local(statement)
               if isinstance(child, ast.Return) and child.value is not None
               for value in [literal_of(child.value)] if value is not None]
    literals = [value for child in ast.walk(node.test) if isinstance(child, ast.Constant)
                for value in [literal_of(child)] if value is not None]
    return Branch(node.lineno, ast.dump(node.test), f"if {ast.unparse(node.test)}:", compared, returns, literals)
