"""Python assertions graded by strength (see :class:`.model.Atom`).

``assert x == 3`` is equality (3); ``assert x > 0``, ``x in (...)``, approx and tolerances
are 2; ``assert x``, ``is not None``, ``isinstance`` are 1; ``assert True``, ``x == x``,
``len(x) >= 0`` or ``isinstance(x, object)`` assert nothing (0). unittest, mock and numpy
assertion methods map onto the same scale. Judged by meaning, not spelling: a comparison
with the default tolerance (``pytest.approx(2.5)``, ``math.isclose``, ``assertAlmostEqual``)
is equality; ``len(x) == 2`` checks ``x``'s length only (2); ``assert (a, b) == (1, 2)`` is
two assertions; ``pytest.warns``/``raises`` with ``match`` check the error and its message.
"""

from __future__ import annotations

import ast

from ..model import Atom, Lit, lit, trivial

_UNITTEST = {
    "assertEqual": 3, "assertEquals": 3, "assertListEqual": 3, "assertDictEqual": 3, "assertTupleEqual": 3,
    "assertSetEqual": 3, "assertSequenceEqual": 3, "assertMultiLineEqual": 3, "assertCountEqual": 3,
    "assertIs": 3, "assertIsNone": 3, "assert_called_once_with": 3, "assert_called_with": 3,
    "assert_has_calls": 3, "assert_not_called": 3, "assert_awaited_once_with": 3, "assert_array_equal": 3,
    "assert_equal": 3, "assert_frame_equal": 3, "assert_series_equal": 3,
    "assertIn": 2, "assertNotIn": 2, "assertGreater": 2, "assertGreaterEqual": 2, "assertLess": 2,
    "assertLessEqual": 2, "assertRegex": 2, "assertDictContainsSubset": 2, "assert_any_call": 2,
    "assert_called_once": 2, "assertNotAlmostEqual": 1,
    "assertIsNotNone": 1, "assertIsInstance": 1, "assertNotEqual": 1, "assertIsNot": 1,
    "assertNotIsInstance": 1, "assertNotRegex": 1, "assert_called": 1, "assert_awaited": 1,
}
_RAISES = ("raises", "assertRaises", "assertRaisesRegex", "warns", "assertWarns", "assertWarnsRegex",
           "deprecated_call")
_BROAD = ("Exception", "BaseException")
# a tolerance no larger than these defaults compares floats for equality (the idiomatic way)
_DEFAULT_SLACK = 1e-6


def dotted(node: ast.AST) -> str:
    """``pytest.mark.skip`` for an attribute chain, the name for a name, '' otherwise."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted(node.value)
        return f"{head}.{node.attr}" if head else node.attr
    if isinstance(node, ast.Call):
        return dotted(node.func)
    return ""


def literal_of(node: ast.AST) -> Lit | None:
    try:
        return lit(ast.literal_eval(node))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _constant(node: ast.expr) -> bool | None:
    """The truth value of a constant expression (``True``, ``1``, ``"x"``, ``not False``)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _constant(node.operand)
        return None if inner is None else not inner
    if isinstance(node, ast.BoolOp):
        values = [_constant(value) for value in node.values]
        if isinstance(node.op, ast.Or) and any(value is True for value in values):
            return True
        if None in values:
            return None
        return all(values) if isinstance(node.op, ast.And) else any(values)
    value = literal_of(node)
    return None if value is None else bool(value[1])


def _tolerance(call: ast.Call, names: dict[str, float], positional: int | None = None) -> float:
    """The largest slack a tolerance call allows (``rel``/``abs``/``places``/``delta``)."""
    values = dict(names)
    arguments = {keyword.arg: keyword.value for keyword in call.keywords if keyword.arg}
    if positional is not None and len(call.args) > positional:
        arguments.setdefault(next(iter(names)), call.args[positional])
    for name, node in arguments.items():
        value = literal_of(node)
        if name in values and value is not None and value[0] == "num":
            values[name] = value[1]
    if "places" in values or "decimal" in values:
        digits = values.pop("places", values.pop("decimal", 7.0))
        values["digits"] = 0.5 * 10 ** -digits
    if "delta" in values and "delta" in arguments:
        return float(values["delta"])
    return float(max(value for value in values.values()))


def raises_atom(node: ast.expr, names: Names | None = None) -> Atom | None:
    """``pytest.raises(E, match=...)``, ``pytest.warns(W, match=...)``, ``self.assertRaises(E)``
    as an assertion: what it expects, and the message pattern when one is required."""
    if not isinstance(node, ast.Call):
        return None
    name = dotted(node.func).rsplit(".", 1)[-1]
    if name not in _RAISES or (not node.args and name != "deprecated_call"):
        return None
    match = next((keyword.value for keyword in node.keywords if keyword.arg == "match"), None)
    if match is None and name.endswith("Regex") and len(node.args) > 1:
        match = node.args[1]
    pattern = match is not None
    text = match.value if isinstance(match, ast.Constant) and isinstance(match.value, str) else None
    exception = ast.unparse(node.args[0]) if node.args else "DeprecationWarning"
    return Atom(node.lineno, ast.unparse(node), ast.dump(node), "<raises>", 2 + pattern, "raises",
                exception=exception, pattern=pattern, shape=shape(node, names), literals=literals_in(node, names),
                match=text)


Names = dict[str, ast.expr]   # a test's simple local assignments: `result = f(1, 2)`


def shape(node: ast.AST, names: Names | None = None) -> str:
    """``node`` with its literals and local names as ``_``: ``add(1, 2) == 3`` and
    ``add(a, b) == expected`` have the same shape, and so do ``result == 3`` after
    ``result = add(1, 2)`` (``names``). Called names, attributes and capitalised names
    (classes, constants) stay: they say what is checked. An equality is ``left == right``
    however it is spelled (``assert``, ``assertEqual``)."""
    if isinstance(node, ast.Constant):
        return "_"
    if isinstance(node, ast.Name):
        if names and node.id in names:
            return shape(names[node.id])
        return node.id if node.id[:1].isupper() else "_"
    if isinstance(node, ast.Attribute):
        return f"{shape(node.value, names)}.{node.attr}"
    if isinstance(node, ast.Call):
        callee = dotted(node.func) or shape(node.func, names)
        arguments = [shape(argument, names) for argument in node.args]
        arguments += [f"{keyword.arg}={shape(keyword.value, names)}" for keyword in node.keywords]
        return f"{callee}({', '.join(arguments)})"
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq | ast.Is):
        left, right = node.left, node.comparators[0]
        if literal_of(left) is not None and literal_of(right) is None:
            left, right = right, left
        return f"{shape(left, names)} == {shape(right, names)}"
    if isinstance(node, ast.Tuple | ast.List | ast.Set) and all(isinstance(item, ast.Constant) for item in node.elts):
        return "_"  # a literal table is data
    children = [shape(child, names) for child in ast.iter_child_nodes(node)
                if not isinstance(child, ast.expr_context)]
    return f"{type(node).__name__}({', '.join(children)})"


def literals_in(node: ast.AST, names: Names | None = None) -> frozenset[Lit]:
    """The non-trivial literal values under ``node`` (and in the locals it names)."""
    found = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Constant):
            value = lit(child.value)
            if value is not None and not trivial(value):
                found.add(value)
        elif names and isinstance(child, ast.Name) and child.id in names:
            found.update(literals_in(names[child.id]))
    return frozenset(found)


def _atom(node: ast.expr, line: int, text: str, names: Names | None = None) -> Atom:
    """One asserted expression (see :func:`_atoms` for one that holds several)."""
    atom = _graded(node, line, text)
    atom.shape = shape(node, names)
    atom.literals = literals_in(node, names)
    return atom


def _atoms(node: ast.expr, line: int, text: str, names: Names | None = None) -> list[Atom]:
    """The assertions an asserted expression holds: ``a and b`` is two, and so is
    ``(a, b) == (1, 2)`` (merged comparisons check each pair)."""
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        return [atom for part in node.values for atom in _atoms(part, line, text, names)]
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq):
        left, right = node.left, node.comparators[0]
        if isinstance(left, ast.Tuple | ast.List) and isinstance(right, ast.Tuple | ast.List) and \
                len(left.elts) == len(right.elts) > 1 and not any(isinstance(item, ast.Starred) for item in left.elts):
            return [_atom(ast.Compare(left=a, ops=[ast.Eq()], comparators=[b]), line, text, names)
                    for a, b in zip(left.elts, right.elts, strict=True)]
    return [_atom(node, line, text, names)]


def _tautology(node: ast.expr) -> bool:
    """True whatever the code under test does: ``x == x``, ``len(x) >= 0``,
    ``isinstance(x, object)``, ``x in [x]``, ``a or not a``, ``... or True``."""
    if _constant(node) is True:
        return True
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        dumps = [ast.dump(value) for value in node.values]
        negated = {ast.dump(value.operand) for value in node.values
                   if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not)}
        return any(_tautology(value) for value in node.values) or bool(negated & set(dumps)) or _complementary(
            [value for value in node.values if isinstance(value, ast.Compare) and len(value.ops) == 1])
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, op, right = node.left, node.ops[0], node.comparators[0]
        if isinstance(op, ast.Eq | ast.Is | ast.GtE | ast.LtE) and ast.dump(left) == ast.dump(right):
            return True
        if isinstance(op, ast.In) and isinstance(right, ast.List | ast.Tuple | ast.Set) and any(
                ast.dump(item) == ast.dump(left) for item in right.elts):
            return True
        sized = _sized(left)
        bound = literal_of(right)
        if sized is not None and bound is not None and bound[0] == "num" and (
                (isinstance(op, ast.GtE) and bound[1] <= 0) or (isinstance(op, ast.Gt) and bound[1] < 0)):
            return True
    # isinstance(x, object) holds for every x
    return isinstance(node, ast.Call) and dotted(node.func) == "isinstance" and len(node.args) == 2 and \
        dotted(node.args[1]) == "object"


_OPPOSITE = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt,
             ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}


def _complementary(compares: list[ast.Compare]) -> bool:
    """``a == b or a != b``: two comparisons of the same sides that cannot both be false."""
    seen = {(ast.dump(item.left), type(item.ops[0]), ast.dump(item.comparators[0])) for item in compares}
    return any((left, _OPPOSITE.get(op), right) in seen for left, op, right in seen)


def _sized(node: ast.expr) -> ast.expr | None:
    """``x`` of ``len(x)``: a view of ``x`` that checks its size only."""
    if isinstance(node, ast.Call) and dotted(node.func) == "len" and len(node.args) == 1:
        return node.args[0]
    return None


def _graded(node: ast.expr, line: int, text: str) -> Atom:
    key = ast.dump(node)
    if _tautology(node):
        return Atom(line, text, key, ast.unparse(node), 0)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return Atom(line, text, key, ast.unparse(node.operand), 1)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, op, right = node.left, node.ops[0], node.comparators[0]
        if dotted(left).endswith("approx"):
            left, right = right, left
        if isinstance(right, ast.Call) and dotted(right.func).endswith("approx"):
            expected = literal_of(right.args[0]) if right.args else None
            slack = _tolerance(right, {"rel": 1e-6, "abs": 1e-12})
            return Atom(line, text, key, ast.unparse(left), _approx_strength(slack), "approx", expected, slack)
        if literal_of(left) is not None and literal_of(right) is None:
            left, right = right, left
        sized = _sized(left)
        if sized is not None and isinstance(op, ast.Eq | ast.Is):
            expected = literal_of(right)  # its length only, unless that says it is empty
            return Atom(line, text, key, ast.unparse(sized), 3 if expected == ("num", 0.0) else 2, expected=expected)
        if sized is not None and isinstance(op, ast.Gt | ast.GtE | ast.NotEq):
            return Atom(line, text, key, ast.unparse(sized), 1)  # not empty: truthiness
        if isinstance(op, ast.Eq | ast.Is):
            return Atom(line, text, key, ast.unparse(left), 3, expected=literal_of(right))
        if isinstance(op, ast.Lt | ast.LtE) and isinstance(left, ast.Call) and dotted(left.func) == "abs" \
                and left.args and isinstance(left.args[0], ast.BinOp) and isinstance(left.args[0].op, ast.Sub):
            bound = literal_of(right)
            return Atom(line, text, key, ast.unparse(left.args[0].left), 2, "approx",
                        literal_of(left.args[0].right), bound[1] if bound and bound[0] == "num" else None)
        strength = 1 if isinstance(op, ast.NotEq | ast.IsNot) else 2
        return Atom(line, text, key, ast.unparse(left), strength)
    if isinstance(node, ast.Compare):
        return Atom(line, text, key, ast.unparse(node.left), 2)
    if isinstance(node, ast.Call) and dotted(node.func) in ("isinstance", "hasattr", "callable") and node.args:
        return Atom(line, text, key, ast.unparse(node.args[0]), 1)
    if isinstance(node, ast.Call) and dotted(node.func).endswith("isclose") and len(node.args) >= 2:
        slack = _tolerance(node, {"rel_tol": 1e-9, "abs_tol": 0.0})
        return Atom(line, text, key, ast.unparse(node.args[0]), _approx_strength(slack), "approx",
                    literal_of(node.args[1]), slack)
    return Atom(line, text, key, ast.unparse(node), 1)


def _approx_strength(slack: float | None) -> int:
    """A comparison within the default tolerance is equality (3); a wider one is 2."""
    return 3 if slack is not None and slack <= _DEFAULT_SLACK else 2


def _method_atom(call: ast.Call, names: Names | None = None) -> Atom | None:
    name = dotted(call.func).rsplit(".", 1)[-1]
    text, key, line = ast.unparse(call), ast.dump(call), call.lineno
    raised = raises_atom(call, names)
    if raised is not None:
        return raised
    args = call.args
    if name in ("assertTrue", "assert_") and args:
        return _atom(args[0], line, text, names)
    if name == "assertFalse" and args:
        strength = 0 if _constant(args[0]) is False else 1
        return Atom(line, text, key, ast.unparse(args[0]), strength, shape=shape(call, names),
                    literals=literals_in(call, names))
    if name in ("assertAlmostEqual", "assert_almost_equal", "assert_array_almost_equal") and len(args) >= 2:
        if name == "assertAlmostEqual":
            defaults = {"places": 7.0, "delta": 0.0}
        else:  # numpy's defaults: 7 decimals for scalars, 6 for arrays
            defaults = {"decimal": 7.0 if name == "assert_almost_equal" else 6.0}
        slack = _tolerance(call, defaults, positional=2)
        return Atom(line, text, key, ast.unparse(args[0]), _approx_strength(slack), "approx", literal_of(args[1]),
                    slack, shape=shape(call, names), literals=literals_in(call, names))
    if name == "assert_allclose" and len(args) >= 2:
        slack = _tolerance(call, {"rtol": 1e-7, "atol": 0.0}, positional=2)
        return Atom(line, text, key, ast.unparse(args[0]), _approx_strength(slack), "approx", literal_of(args[1]),
                    slack, shape=shape(call, names), literals=literals_in(call, names))
    if name not in _UNITTEST:
        return None
    strength = _UNITTEST[name]
    if name.startswith("assert_") and name[7:10] in ("cal", "has", "not", "any", "awa"):  # mock methods
        return Atom(line, text, key, dotted(call.func).rsplit(".", 1)[0], strength, shape=shape(call, names),
                    literals=literals_in(call, names))
    subject, expected = (args[0] if args else call), (args[1] if len(args) > 1 else None)
    if expected is not None and literal_of(subject) is not None and literal_of(expected) is None:
        subject, expected = expected, subject
    if strength >= 2 and expected is not None and ast.dump(subject) == ast.dump(expected) and name not in (
            "assertGreater", "assertLess", "assertNotIn", "assertIn"):
        strength = 0
    sized = _sized(subject)
    if sized is not None and expected is not None:
        bound = literal_of(expected)
        if name in ("assertGreaterEqual",) and bound is not None and bound[0] == "num" and bound[1] <= 0:
            strength = 0
        elif strength == 3:
            strength = 2  # its length only
        subject = sized
    equality = strength >= 3 and expected is not None  # spelled `assertEqual(a, b)` or `assert a == b`
    return Atom(line, text, key, ast.unparse(subject), strength,
                expected=literal_of(expected) if expected is not None else None,
                shape=f"{shape(subject, names)} == {shape(expected, names)}" if equality and expected is not None
                else shape(call, names), literals=literals_in(call, names))


def atoms_of(statement: ast.stmt, names: Names | None = None) -> list[Atom]:
    """Every assertion in ``statement`` (nested functions excluded: they may never run);
    ``names``: the test's simple locals, seen through in the assertions' shapes."""
    found: list[Atom] = []
    stack: list[ast.AST] = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Assert):
            parts = node.test.values if isinstance(node.test, ast.BoolOp) and isinstance(
                node.test.op, ast.And) else [node.test]
            found.extend(atom for part in parts for atom in _atoms(part, node.lineno, ast.unparse(node), names))
        elif isinstance(node, ast.Call):
            atom = _method_atom(node, names)
            if atom is not None:
                found.append(atom)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
                stack.append(child)
    return sorted(found, key=lambda atom: atom.line)


def broad(types: list[str]) -> bool:
    return not types or any(name.rsplit(".", 1)[-1] in _BROAD for name in types)
