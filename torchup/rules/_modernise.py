"""Shared by the modernisation rules (TU5xx): the facts about 2.14's new features, and small
questions about call arguments.

The facts are data, ``data/features.json``, loaded once the way ``data/torch_api.json`` is.
"""

from __future__ import annotations

import ast
import json
from typing import Any

from torchup.analysis.context import Context
from torchup.core.data import data_text


def _load() -> dict[str, Any]:
    return json.loads(data_text("features.json"))


FEATURES: dict[str, Any] = _load()


def feature(name: str) -> dict[str, Any]:
    """One feature's facts; KeyError if the data does not know it."""
    return FEATURES[name]


def keyword(call: ast.Call, name: str) -> ast.keyword | None:
    return next((k for k in call.keywords if k.arg == name), None)


def string_value(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def file_strings(ctx: Context) -> list[str]:
    """Every string literal in the file (f-string parts included)."""
    return [node.value for node in ast.walk(ctx.tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def attribute_names(ctx: Context) -> set[str]:
    """The attribute names the file uses anywhere (``x.mps``, ``config.option = ...``)."""
    return {node.attr for node in ast.walk(ctx.tree) if isinstance(node, ast.Attribute)}


def local_function(ctx: Context, node: ast.expr) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | None:
    """The one ``def`` (or ``name = lambda ...``) in this file that the name ``node`` refers to."""
    if isinstance(node, ast.Lambda):
        return node
    if not isinstance(node, ast.Name):
        return None
    found = ctx.resolver.lookup_name(node)
    if len(found.bindings) != 1:
        return None
    binding = found.bindings[0]
    if isinstance(binding.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return binding.node
    if isinstance(binding.value, ast.Lambda):
        return binding.value
    return None


def returned_call(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> ast.Call | None:
    """The call a function does nothing but return: ``lambda t: f(t)``, ``def g(t): return f(t)``."""
    if isinstance(function, ast.Lambda):
        return function.body if isinstance(function.body, ast.Call) else None
    body = list(function.body)
    if body and isinstance(body[0], ast.Expr) and string_value(body[0].value) is not None:
        body = body[1:]  # a docstring
    if len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Call):
        return body[0].value
    return None
