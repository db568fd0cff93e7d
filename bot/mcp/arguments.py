"""Checking an MCP tool call's arguments against its schema, with one line a model can act on
(a schema validator's own report names JSON pointers and dumps the whole instance)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from bot.errors import MemrepoError
from bot.mcp.catalog import ToolSpec

MCP_ARG_UNKNOWN = "{tool} does not take the argument '{name}' (it takes: {accepted})"
MCP_ARG_TYPE = "{tool}: '{name}' must be {expected}, found {kind}"
MCP_ARG_RANGE = "{tool}: '{name}' must be {bounds}, found {value}"
# How a value and a JSON Schema type read inside an argument's refusal ("'k' must be a whole
# number, found text"), and the bounds of a number.
# What a value given is, by the name of its Python type (from JSON: str, bool, int, float, list,
# dict or None).
VALUE_KINDS = {"str": "text", "bool": "true/false", "int": "a whole number", "float": "a number", "list": "a list",
               "dict": "an object", "NoneType": "null"}
# What a JSON Schema type asks for.
SCHEMA_TYPES = {"string": "text", "integer": "a whole number", "number": "a number", "boolean": "true or false",
                "array": "a list", "object": "an object"}

_validators: dict[str, Draft202012Validator] = {}


def _kind(value: object) -> str:
    return VALUE_KINDS.get(type(value).__name__, type(value).__name__)


def _validator(spec: ToolSpec) -> Draft202012Validator:
    validator = _validators.get(spec.name)
    if validator is None:
        validator = _validators[spec.name] = Draft202012Validator(spec.input_schema)
    return validator


def check(spec: ToolSpec, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """The arguments with schema defaults filled in, or a MemrepoError saying, in one line, the
    first thing wrong with them."""
    args = dict(arguments or {})
    errors = sorted(_validator(spec).iter_errors(args), key=lambda e: (len(e.absolute_path), list(e.absolute_path)))
    if errors:
        raise MemrepoError(describe(spec, errors[0]))
    for name, prop in spec.properties.items():
        if name not in args and "default" in prop:
            args[name] = prop["default"]
    return args


def describe(spec: ToolSpec, error: ValidationError) -> str:
    """One line for one schema violation."""
    where = [str(part) for part in error.absolute_path]
    name = where[0] if where else ""
    kind = error.validator
    if kind == "required":
        missing = next((n for n in spec.required if n not in error.instance), "?")
        return f"{spec.name} needs the argument '{missing}'"
    if kind == "additionalProperties":
        extra = sorted(set(error.instance) - set(spec.properties))
        return MCP_ARG_UNKNOWN.format(tool=spec.name, name=extra[0] if extra else "?",
                                            accepted=", ".join(spec.properties))
    if kind == "type":
        expected = SCHEMA_TYPES.get(str(error.validator_value), str(error.validator_value))
        return MCP_ARG_TYPE.format(tool=spec.name, name=".".join(where), expected=expected,
                                            kind=_kind(error.instance))
    if kind == "enum":
        return "{tool}: '{name}' must be one of: {choices}".format(tool=spec.name, name=name,
                                           choices=", ".join(map(str, error.validator_value)))
    if kind in ("minimum", "maximum"):
        low, high = spec.properties[name].get("minimum"), spec.properties[name].get("maximum")
        bounds = f"from {low} to {high}" if low is not None and high is not None else (
            f"at least {low}" if low is not None else f"at most {high}")
        return MCP_ARG_RANGE.format(tool=spec.name, name=name, bounds=bounds, value=error.instance)
    if kind == "minLength":
        return f"{spec.name}: '{name}' must not be empty"
    if kind in ("minItems", "maxItems"):
        return f"{spec.name}: '{name}' must be two whole numbers [first line, last line]"
    return "{tool}: '{name}' is not valid".format(tool=spec.name, name=name or "arguments")
