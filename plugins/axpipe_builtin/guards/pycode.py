"""Python code under test, read from the AST: functions with the literals they return and
the literals their branches compare inputs with, and every exception handler."""

from __future__ import annotations

import ast

from . import pyhooks, pytests
from .model import Branch, FunctionFacts, Handler, Lit, Marker, ModuleFacts, Return, ScopeMarker
from .pyatoms import broad, dotted, literal_of

_LOGGERS = ("log", "logger", "logging", "LOG", "LOGGER", "_log", "_logger", "warnings", "traceback", "print",
            "sys.stderr.write", "sys.stdout.write")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def extract(text: str, path: str, *, test_file: bool) -> ModuleFacts:
    """Everything the guards compare in one Python file. Raises SyntaxError."""
    tree = ast.parse(text)
    facts = ModuleFacts()
    if test_file:
        pytests.extract_tests(tree, path, facts)
        if path.rsplit("/", 1)[-1] == "conftest.py":
            _collect_ignore(tree, facts)
    # hooks may live in any plugin module (`-p name`, `pytest_plugins`, an entry point)
    pyhooks.extract_hooks(tree, facts, conftest=path.rsplit("/", 1)[-1] == "conftest.py")
    _Walker(facts).visit(tree)
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
    def __init__(self, facts: ModuleFacts) -> None:
        self.facts = facts
        self.scope: list[str] = []

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.scope.append(node.name)
        name = ".".join(self.scope)
        arguments = node.args
        params = [arg.arg for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
        if arguments.vararg:
            params.append(arguments.vararg.arg)
        function = FunctionFacts(name, node.name, node.lineno, ast.dump(node), params)
        self._body(node.body, function, top=True)
        self.facts.functions[name] = function
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
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
            key=f"{'.'.join(self.scope)}|{head}|{ast.dump(ast.Module(body=body, type_ignores=[]))}",
            text=f"{head} {'; '.join(ast.unparse(statement) for statement in body)}"[:120],
            types=types, reraises=reraises, discards=all(_does_nothing(statement) for statement in body),
            quiet=all(_leaves(statement) or _logs(statement) for statement in body), broad=broad(types),
            bare=node.type is None))
        self.generic_visit(node)

    def _with(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            call = item.context_expr
            if isinstance(call, ast.Call) and dotted(call.func).rsplit(".", 1)[-1] == "suppress":
                types = [dotted(arg) or ast.unparse(arg) for arg in call.args]
                self.facts.handlers.append(Handler(
                    line=node.lineno, function=".".join(self.scope),
                    key=f"{'.'.join(self.scope)}|{ast.dump(call)}|{ast.dump(ast.Module(node.body, []))}",
                    text=f"with {ast.unparse(call)}:", types=types, discards=True, broad=broad(types),
                    suppress=True))
        self.generic_visit(node)

    visit_With = _with
    visit_AsyncWith = _with


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
