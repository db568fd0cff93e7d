"""Words of the MCP server's messages that bot/messages.py does not hold: how a value and a
JSON Schema type read inside an argument's refusal ("'k' must be a whole number, found text"),
and the bounds of a number."""

# What a value given is, by the name of its Python type (from JSON: str, bool, int, float, list,
# dict or None).
VALUE_KINDS = {"str": "text", "bool": "true/false", "int": "a whole number", "float": "a number", "list": "a list",
               "dict": "an object", "NoneType": "null"}
# What a JSON Schema type asks for.
SCHEMA_TYPES = {"string": "text", "integer": "a whole number", "number": "a number", "boolean": "true or false",
                "array": "a list", "object": "an object"}
BOUNDS_BOTH = "from {low} to {high}"
BOUNDS_LOW = "at least {low}"
BOUNDS_HIGH = "at most {high}"
