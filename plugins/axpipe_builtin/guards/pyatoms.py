"""Python assertions graded by strength (see :class:`.model.Atom`).

``assert x == 3`` is equality (3); ``assert x > 0``, ``x in (...)``, approx and tolerances
are 2; ``assert x``, ``is not None``, ``isinstance`` are 1; ``assert True`` or ``x == x``
assert nothing (0). unittest, mock and numpy assertion methods map onto the same scale.
"""

from __future__ import annotations

import ast

from .model import Atom, Lit, lit

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
_RAISES = ("raises", "assertRaises", "assertRaisesRegex")
_BROAD = ("Exception", "BaseException")


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


def raises_atom(node: ast.expr) -> Atom | None:
    """``pytest.raises(E, match=...)`` / ``self.assertRaises(E)`` as an assertion."""
    if not isinstance(node, ast.Call) or dotted(node.func).rsplit(".", 1)[-1] not in _RAISES or not node.args:
        return None
    pattern = any(keyword.arg == "match" for keyword in node.keywords) or dotted(node.func).endswith("Regex")
    exception = ast.unparse(node.args[0])
    text = ast.unparse(node)
    return Atom(node.lineno, text, ast.dump(node), "<raises>", 2 + pattern, "raises",
                exception=exception, pattern=pattern)


def _atom(node: ast.expr, line: int, text: str) -> Atom:
    """One asserted expression."""
    key = ast.dump(node)
    if _constant(node) is True:
        return Atom(line, text, key, ast.unparse(node), 0)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return Atom(line, text, key, ast.unparse(node.operand), 1)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, op, right = node.left, node.ops[0], node.comparators[0]
        if dotted(left).endswith("approx"):
            left, right = right, left
        if isinstance(right, ast.Call) and dotted(right.func).endswith("approx"):
            expected = literal_of(right.args[0]) if right.args else None
            return Atom(line, text, key, ast.unparse(left), 2, "approx", expected,
                        _tolerance(right, {"rel": 1e-6, "abs": 1e-12}))
        if literal_of(left) is not None and literal_of(right) is None:
            left, right = right, left
        if isinstance(op, ast.Eq | ast.Is):
            if ast.dump(left) == ast.dump(right):
                return Atom(line, text, key, ast.unparse(left), 0)
            return Atom(line, text, key, ast.unparse(left), 3, expected=literal_of(right))
        if isinstance(op, ast.Lt | ast.LtE) and isinstance(left, ast.Call) and dotted(left.func) == "abs" \
                and left.args and isinstance(left.args[0], ast.BinOp) and isinstance(left.args[0].op, ast.Sub):
            slack = literal_of(right)
            return Atom(line, text, key, ast.unparse(left.args[0].left), 2, "approx",
                        literal_of(left.args[0].right), slack[1] if slack and slack[0] == "num" else None)
        strength = 1 if isinstance(op, ast.NotEq | ast.IsNot) else 2
        return Atom(line, text, key, ast.unparse(left), strength)
    if isinstance(node, ast.Compare):
        return Atom(line, text, key, ast.unparse(node.left), 2)
    if isinstance(node, ast.Call) and dotted(node.func) in ("isinstance", "hasattr", "callable") and node.args:
        return Atom(line, text, key, ast.unparse(node.args[0]), 1)
    if isinstance(node, ast.Call) and dotted(node.func).endswith("isclose") and len(node.args) >= 2:
        return Atom(line, text, key, ast.unparse(node.args[0]), 2, "approx", literal_of(node.args[1]),
                    _tolerance(node, {"rel_tol": 1e-9, "abs_tol": 0.0}))
    return Atom(line, text, key, ast.unparse(node), 1)


def _method_atom(call: ast.Call) -> Atom | None:
    name = dotted(call.func).rsplit(".", 1)[-1]
    text, key, line = ast.unparse(call), ast.dump(call), call.lineno
    raised = raises_atom(call)
    if raised is not None:
        return raised
    args = call.args
    if name in ("assertTrue", "assert_") and args:
        return _atom(args[0], line, text)
    if name == "assertFalse" and args:
        strength = 0 if _constant(args[0]) is False else 1
        return Atom(line, text, key, ast.unparse(args[0]), strength)
    if name in ("assertAlmostEqual", "assert_almost_equal", "assert_array_almost_equal") and len(args) >= 2:
        if name == "assertAlmostEqual":
            names = {"places": 7.0, "delta": 0.0}
        else:  # numpy's defaults: 7 decimals for scalars, 6 for arrays
            names = {"decimal": 7.0 if name == "assert_almost_equal" else 6.0}
        return Atom(line, text, key, ast.unparse(args[0]), 2, "approx", literal_of(args[1]),
                    _tolerance(call, names, positional=2))
    if name == "assert_allclose" and len(args) >= 2:
        return Atom(line, text, key, ast.unparse(args[0]), 2, "approx", literal_of(args[1]),
                    _tolerance(call, {"rtol": 1e-7, "atol": 0.0}, positional=2))
    if name not in _UNITTEST:
        return None
    strength = _UNITTEST[name]
    if name.startswith("assert_") and name[7:10] in ("cal", "has", "not", "any", "awa"):  # mock methods
        return Atom(line, text, key, dotted(call.func).rsplit(".", 1)[0], strength)
    subject, expected = (args[0] if args else call), (args[1] if len(args) > 1 else None)
    if expected is not None and literal_of(subject) is not None and literal_of(expected) is None:
        subject, expected = expected, subject
    if strength == 3 and expected is not None and ast.dump(subject) == ast.dump(expected):
        strength = 0
    return Atom(line, text, key, ast.unparse(subject), strength,
                expected=literal_of(expected) if expected is not None else None)


def atoms_of(statement: ast.stmt) -> list[Atom]:
    """Every assertion in ``statement`` (nested functions excluded: they may never run)."""
    found: list[Atom] = []
    stack: list[ast.AST] = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Assert):
            parts = node.test.values if isinstance(node.test, ast.BoolOp) and isinstance(
                node.test.op, ast.And) else [node.test]
            found.extend(_atom(part, node.lineno, ast.unparse(node)) for part in parts)
        elif isinstance(node, ast.Call):
            atom = _method_atom(node)
            if atom is not None:
                found.append(atom)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
                stack.append(child)
    return sorted(found, key=lambda atom: atom.line)


def broad(types: list[str]) -> bool:
    return not types or any(name.rsplit(".", 1)[-1] in _BROAD for name in types)
