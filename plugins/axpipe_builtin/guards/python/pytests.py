"""Python tests as pytest and unittest collect them, read from the AST.

For each test: its assertions (``assert``, ``self.assert*``, ``pytest.raises``, approx and
tolerances, mock and numpy assertions) graded by strength, its skip/xfail markers (own,
class, module, ``pytest.param(marks=...)``, ``pytest.skip()`` calls), parametrised cases,
and the literals mocks return. Also the claims tests make about functions
(``f(40, 2) == 42``) and the errors they expect (``pytest.raises(E)`` around ``f()``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from ..model import Atom, Expectation, Lit, Marker, ModuleFacts, ScopeMarker, TestFacts, lit, trivial
from .pyatoms import atoms_of, dotted, literal_of, literals_in, raises_atom

_SKIP_BODY = {"skip": "skip", "xfail": "xfail", "importorskip": "skip", "skipTest": "skip"}


def marker_kind(node: ast.expr) -> str | None:
    """``skip``/``xfail`` when ``node`` is a skipping decorator or mark, else None."""
    parts = dotted(node.func if isinstance(node, ast.Call) else node).split(".")
    last = parts[-1]
    if "mark" in parts[:-1] and last in ("skip", "skipif", "xfail"):
        return "xfail" if last == "xfail" else "skip"
    if last in ("skip", "skipIf", "skipUnless", "expectedFailure") and (len(parts) == 1 or parts[0] == "unittest"):
        return "xfail" if last == "expectedFailure" else "skip"
    return None


def _marks_in(node: ast.expr, prefix: str = "") -> list[Marker]:
    items = node.elts if isinstance(node, ast.List | ast.Tuple) else [node]
    found = []
    for item in items:
        kind = marker_kind(item)
        if kind:
            source = dotted(item.func if isinstance(item, ast.Call) else item)
            found.append(Marker(kind, item.lineno, prefix + ast.unparse(item), source, _conditional(item)))
    return found


def _conditional(node: ast.expr) -> bool:
    """A skip or xfail that applies only when its condition holds: ``skipif(sys.platform ==
    'win32')``; ``skipif(True)``, ``skip``, ``xfail()`` and ``expectedFailure`` always apply."""
    if not isinstance(node, ast.Call):
        return False
    conditions = [*node.args[:1], *(keyword.value for keyword in node.keywords if keyword.arg == "condition")]
    if dotted(node.func).rsplit(".", 1)[-1] == "skip":
        return False
    return any(literal_of(condition) is None for condition in conditions)


def is_test_class(node: ast.ClassDef) -> bool:
    if any(dotted(base).endswith("TestCase") for base in node.bases):
        return True
    has_init = any(isinstance(item, ast.FunctionDef) and item.name == "__init__" for item in node.body)
    return node.name.startswith("Test") and not has_init


def extract_tests(tree: ast.Module, path: str, facts: ModuleFacts, unchanged: frozenset[str],
                  rows: list[str]) -> None:
    """Fill ``facts`` with the tests of a test module; a test named in ``unchanged`` is the
    same on both sides of the change, so only its name is read."""
    module_tests: list[str] = []
    hidden = _not_collected(tree.body)  # `__test__ = False` at module level: pytest collects nothing here
    for statement in tree.body:
        module_tests.extend(_collect(statement, "", [], path, facts, unchanged, rows, hidden))
    for marker in _module_markers(tree):
        facts.scope_markers.append(ScopeMarker("module", marker, module_tests))
    for statement in tree.body:  # unittest's load_tests protocol: it, not the names, decides what runs
        if isinstance(statement, ast.FunctionDef) and statement.name == "load_tests":
            facts.scope_markers.append(ScopeMarker("module", Marker("deselect", statement.lineno,
                                                                    "def load_tests(...)", "load_tests"), module_tests))
    if hidden:
        # read the whole file (needs_whole): each test it hides is then reported as not collected
        facts.scope_markers.append(ScopeMarker("module", Marker("deselect", hidden, "__test__ = False",
                                                                "__test__"), []))


def _not_collected(body: list[ast.stmt]) -> int:
    """The line of a ``__test__ = False`` in ``body``, which makes pytest skip its module or
    class whatever the names say; 0 when there is none."""
    for statement in body:
        if isinstance(statement, ast.Assign) and any(isinstance(target, ast.Name) and target.id == "__test__"
                                                     for target in statement.targets) and \
                isinstance(statement.value, ast.Constant) and not statement.value.value:
            return statement.lineno
    return 0


def _collect(node: ast.stmt, prefix: str, inherited: list[Marker], path: str, facts: ModuleFacts,
             unchanged: frozenset[str], rows: list[str], hidden: int = 0) -> list[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        name = prefix + node.name
        if node.name.startswith("test") and not hidden:
            if name in unchanged:
                facts.tests[name] = TestFacts(name=name, line=node.lineno, fingerprint="", light=True)
            else:
                facts.tests[name] = _test(node, name, path, facts, rows)
            return [name]
        facts.uncollected[name] = (node.lineno, _fingerprint(node, rows))
        if name not in unchanged:  # a helper tests call: the assertions a test moved into it still count
            facts.helpers[node.name] = _body_atoms(node)[0]
        return []
    if isinstance(node, ast.ClassDef) and is_test_class(node) and not hidden and not _not_collected(node.body):
        names: list[str] = []
        markers = [m for deco in node.decorator_list for m in _marks_in(deco, "@")]
        for statement in node.body:
            if isinstance(statement, ast.Assign) and any(
                    isinstance(target, ast.Name) and target.id == "pytestmark" for target in statement.targets):
                markers.extend(_marks_in(statement.value))
        for statement in node.body:
            names.extend(_collect(statement, f"{prefix}{node.name}.", markers, path, facts, unchanged, rows))
        for marker in markers:
            facts.scope_markers.append(ScopeMarker(prefix + node.name, marker, names))
        return names
    if isinstance(node, ast.ClassDef):
        for statement in node.body:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
                facts.uncollected[f"{prefix}{node.name}.{statement.name}"] = (statement.lineno,
                                                                            _fingerprint(statement, rows))
    return []


_DEFINITION = re.compile(r"^(?P<indent>[ \t]*)(?:(?:async[ \t]+def|def|class)[ \t]+(?P<name>\w+)"
                         r"|(?P<rebound>test\w*)[ \t]*=(?!=)|del[ \t]+(?P<deleted>test\w*))", re.MULTILINE)


def shadowed(text: str) -> dict[str, tuple[int, int]]:
    """Tests defined twice at the same level of a module (or class): Python keeps the later
    definition, so the runner never sees the earlier one. Name -> (the earlier definition's
    line, the redefinition's). Read from the layout of the whole file, which costs a regular
    expression, not a parse."""
    found: dict[str, tuple[int, int]] = {}
    seen: dict[str, int] = {}
    owner = ""
    line, position = 1, 0
    for match in _DEFINITION.finditer(text):
        line += text.count("\n", position, match.start())
        position = match.start()
        indent = match["indent"]
        rebound = match["rebound"] or match["deleted"]
        if rebound:  # `test_x = None`, `del test_x` at module level: the test is gone
            if not indent and rebound in seen:
                found[rebound] = (seen[rebound], line)
            continue
        name = match["name"]
        if not indent:
            owner = name if match[0].lstrip().startswith("class") else ""
            qualified = name
        elif owner and len(indent.expandtabs()) == 4:
            qualified = f"{owner}.{name}"
        else:
            continue
        if not name.startswith("test") or match[0].lstrip().startswith("class"):
            continue
        if qualified in seen:
            found[qualified] = (seen[qualified], line)
        seen[qualified] = line
    return found


def _fingerprint(node: ast.FunctionDef | ast.AsyncFunctionDef, rows: list[str]) -> str:
    """The body as written, docstring left out (a docstring edit does not make another test),
    with layout and comment lines dropped: two definitions with the same fingerprint are
    the same test. Read from the source lines, which costs far less than unparsing."""
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if not body:
        return ""
    first, last = body[0], body[-1]
    lines = rows[first.lineno - 1:last.end_lineno or last.lineno]
    if lines:
        lines[0] = lines[0][first.col_offset:]
    return "\n".join(" ".join(line.split()) for line in lines if line.strip() and not line.lstrip().startswith("#"))


def _module_markers(tree: ast.Module) -> list[Marker]:
    found: list[Marker] = []
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id == "pytestmark" for target in statement.targets):
            found.extend(_marks_in(statement.value))
        for call in _calls(statement, into_functions=False):
            if dotted(call.func).endswith("skip") and any(
                    keyword.arg == "allow_module_level" for keyword in call.keywords):
                found.append(Marker("skip", call.lineno, ast.unparse(call)))
    return found


def _calls(node: ast.AST, *, into_functions: bool) -> Iterator[ast.Call]:
    stack: list[ast.AST] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Call):
            yield current
        for child in ast.iter_child_nodes(current):
            if into_functions or not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
                                                | ast.ClassDef):
                stack.append(child)


def _test(node: ast.FunctionDef | ast.AsyncFunctionDef, name: str, path: str, facts: ModuleFacts,
          rows: list[str]) -> TestFacts:
    test = TestFacts(name=name, line=node.lineno, fingerprint=_fingerprint(node, rows))
    texts: list[list[str]] = []
    for deco in node.decorator_list:
        test.markers.extend(_marks_in(deco, "@"))
        if isinstance(deco, ast.Call) and dotted(deco.func).endswith("mark.parametrize"):
            values = deco.args[1] if len(deco.args) >= 2 else next(
                (keyword.value for keyword in deco.keywords if keyword.arg == "argvalues"), None)
            if isinstance(values, ast.List | ast.Tuple):
                texts.append([_case_text(value) for value in values.elts])
                for value in values.elts:
                    if isinstance(value, ast.Call) and dotted(value.func).endswith("param"):
                        for keyword in value.keywords:
                            if keyword.arg == "marks":
                                test.markers.extend(_marks_in(keyword.value))
            else:
                texts.append([])  # cases computed elsewhere: not counted
        test.case_literals.update(_data_literals(deco))  # the data it runs with
        for call in _calls(deco, into_functions=False):
            _mock(call, test)
    if texts and all(texts):
        test.case_texts = [" x ".join(combination) for combination in _product(texts)]
        test.cases = len(test.case_texts)
    test.literals.update(test.case_literals, literals_in(node.args))
    # one walk of the body for everything but the assertions: calls (marking those inside
    # nested functions, which may never run), constants, raises, lambdas bound to names
    stack: list[tuple[ast.AST, bool]] = [(statement, False) for statement in node.body]
    while stack:
        current, nested = stack.pop()
        if isinstance(current, ast.Constant):
            constant = lit(current.value)
            if constant is not None and not trivial(constant):
                test.literals.add(constant)
        elif isinstance(current, ast.Call):
            callee = dotted(current.func)
            if callee:
                test.calls.add(callee.rsplit(".", 1)[-1])
            if not nested:
                owner, _, last = callee.rpartition(".")
                if (last == "skipTest" and owner == "self") or (last in _SKIP_BODY and owner in ("pytest", "")):
                    test.markers.append(Marker(_SKIP_BODY[last], current.lineno, ast.unparse(current), callee,
                                               _inside_condition(node, current)))
                _mock(current, test)
        elif isinstance(current, ast.Raise) and current.exc is not None and dotted(
                current.exc.func if isinstance(current.exc, ast.Call) else current.exc).endswith("SkipTest"):
            test.markers.append(Marker("skip", current.lineno, ast.unparse(current), "raise SkipTest",
                                       _inside_condition(node, current)))
        elif isinstance(current, ast.Assign) and isinstance(current.value, ast.Lambda):
            returned = literal_of(current.value.body)
            if returned is not None:
                test.mocks.append((current.lineno, returned, ast.unparse(current)))
        inner = nested or isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef)
        stack.extend((child, inner) for child in ast.iter_child_nodes(current))
    test.atoms, test.early_return = _body_atoms(node)
    test.weight = weight(node, test.atoms)
    _claims(node, f"{path}::{name}", facts)
    return test


def _case_text(value: ast.expr) -> str:
    """One parametrised case as written, without its id and marks."""
    if isinstance(value, ast.Call) and dotted(value.func).endswith("param"):
        return ast.unparse(ast.Tuple(elts=list(value.args), ctx=ast.Load()))
    return ast.unparse(value)


def _product(groups: list[list[str]]) -> list[tuple[str, ...]]:
    combinations: list[tuple[str, ...]] = [()]
    for group in groups:
        combinations = [(*combination, item) for combination in combinations for item in group][:4096]
    return combinations


def _data_literals(node: ast.AST) -> set[Lit]:
    """Literals of a decorator that are data: not ``ids=``, ``id=``, ``marks=``, ``reason=``."""
    found: set[Lit] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.keyword) and current.arg in ("ids", "id", "marks", "reason", "indirect"):
            continue
        if isinstance(current, ast.Constant):
            value = lit(current.value)
            if value is not None and not trivial(value):
                found.add(value)
        stack.extend(ast.iter_child_nodes(current))
    return found


def _inside_condition(function: ast.AST, target: ast.AST) -> bool:
    """Is ``target`` under an ``if`` (or ``try``) of ``function``: a skip that applies only sometimes."""
    for node in ast.walk(function):
        if isinstance(node, ast.If | ast.Try) and node is not function and any(
                child is target for child in ast.walk(node)):
            return True
    return False


def _mock(call: ast.Call, test: TestFacts) -> None:
    """Literals a mock is told to return: ``return_value=42``, ``lambda *a: 42``."""
    for keyword in call.keywords:
        if keyword.arg == "return_value":
            value = literal_of(keyword.value)
            if value is not None:
                test.mocks.append((call.lineno, value, ast.unparse(call)))
    if dotted(call.func).endswith("setattr"):
        for argument in call.args:
            if isinstance(argument, ast.Lambda):
                value = literal_of(argument.body)
                if value is not None:
                    test.mocks.append((call.lineno, value, ast.unparse(call)))


def weight(node: ast.FunctionDef | ast.AsyncFunctionDef, atoms: list[Atom]) -> int:
    """How many assertions one run of the test makes: the arms of an ``if``/``else`` are
    alternatives (a run takes one), so the smaller arm's assertions do not add up."""
    lines = [atom.line for atom in atoms if atom.strength > 0]
    total = len(lines)
    for child in ast.walk(node):
        if isinstance(child, ast.If) and child.orelse and child.body:
            first = sum(1 for line in lines if child.body[0].lineno <= line <= (child.body[-1].end_lineno or 0))
            second = sum(1 for line in lines if child.orelse[0].lineno <= line <= (child.orelse[-1].end_lineno or 0))
            total -= min(first, second)
    return total


def _body_atoms(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[list[Atom], int | None]:
    """Assertions that can run: those after a top-level ``return`` never do."""
    atoms: list[Atom] = []
    names = _locals(node)
    for index, statement in enumerate(node.body):
        if isinstance(statement, ast.Return):
            later = [atom for rest in node.body[index + 1:] for atom in atoms_of(rest, names)]
            return atoms, (statement.lineno if later else None)
        atoms.extend(atoms_of(statement, names))
    return atoms, None


def _locals(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.expr]:
    """Names a test assigns once at its top level (``result = f(1, 2)``): an assertion on
    ``result`` checks ``f(1, 2)``."""
    assigned: dict[str, ast.expr] = {}
    repeated: set[str] = set()
    for statement in node.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(
                statement.targets[0], ast.Name):
            name = statement.targets[0].id
            if name in assigned:
                repeated.add(name)
            assigned[name] = statement.value
    return {name: value for name, value in assigned.items() if name not in repeated}


def _claims(node: ast.FunctionDef | ast.AsyncFunctionDef, where: str, facts: ModuleFacts) -> None:
    """``f(40, 2) == 42`` claims and ``pytest.raises(E)`` around ``f()``, with simple local
    names (``result = f(...)``, ``expected = 42``) resolved."""
    names: dict[str, ast.expr] = {}
    for statement in ast.walk(node):
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(
                statement.targets[0], ast.Name):
            names[statement.targets[0].id] = statement.value

    def resolve(expr: ast.expr) -> ast.expr:
        return names.get(expr.id, expr) if isinstance(expr, ast.Name) else expr

    def claim(actual: ast.expr, expected: ast.expr) -> None:
        actual, expected = resolve(actual), resolve(expected)
        if isinstance(expected, ast.Call) and dotted(expected.func).endswith("approx") and expected.args:
            expected = resolve(expected.args[0])
        value = literal_of(expected)
        if isinstance(actual, ast.Call) and value is not None:
            inputs = tuple(literal_of(arg) or ("other", ast.unparse(arg)) for arg in actual.args)
            inputs += tuple(literal_of(kw.value) or ("other", "") for kw in actual.keywords)
            facts.expectations.append(Expectation(dotted(actual.func).rsplit(".", 1)[-1], inputs, value, where))

    for item in ast.walk(node):
        if isinstance(item, ast.Compare) and len(item.ops) == 1 and isinstance(item.ops[0], ast.Eq | ast.Is):
            claim(item.left, item.comparators[0])
            claim(item.comparators[0], item.left)
        elif isinstance(item, ast.Call) and dotted(item.func).rsplit(".", 1)[-1] in (
                "assertEqual", "assertEquals", "assertAlmostEqual") and len(item.args) >= 2:
            claim(item.args[0], item.args[1])
            claim(item.args[1], item.args[0])
        elif isinstance(item, ast.With | ast.AsyncWith):
            for with_item in item.items:
                atom = raises_atom(with_item.context_expr)
                if atom is not None and atom.exception:
                    for call in (c for s in item.body for c in ast.walk(s) if isinstance(c, ast.Call)):
                        facts.raises.append((dotted(call.func).rsplit(".", 1)[-1], atom.exception, where))
        elif isinstance(item, ast.Call) and dotted(item.func).rsplit(".", 1)[-1] in (
                "raises", "assertRaises", "assertRaisesRegex") and len(item.args) >= 2:
            facts.raises.append((dotted(item.args[1]).rsplit(".", 1)[-1], ast.unparse(item.args[0]), where))
