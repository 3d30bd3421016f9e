"""The quick yes for plain schemas never says yes where the full metaschema check says no.

`SchemaVetting.plain` counts the schemas it passed by the quick check alone.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema.validators import Draft202012Validator

from mcpmount.upstream import SchemaVetting

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"

SIMPLE = ["array", "boolean", "integer", "null", "number", "object", "string"]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 3),
    st.floats(allow_nan=False, width=16),
    st.sampled_from(["string", "", "#", "#/$defs/a", "#/a b", "a%zz", "[(", DRAFT_2020_12]),
)
COUNTS = st.one_of(st.integers(-1, 5), st.just(1.0), st.just(True))
NUMBERS = st.one_of(st.integers(-2, 3), st.floats(allow_nan=False, width=16), st.just(True))
TEXTS = st.one_of(st.text(max_size=3), st.just(1))
FLAGS = st.one_of(st.booleans(), st.just(1))


def values_for(inner: st.SearchStrategy[Any]) -> dict[str, st.SearchStrategy[Any]]:
    """Each keyword's values: mostly what the metaschema allows, sometimes not."""
    schema = st.one_of(inner, SCALARS)
    named = st.dictionaries(st.sampled_from(["a", "b", "$x"]), inner, max_size=2)
    return {
        "type": st.one_of(
            st.sampled_from([*SIMPLE, "strin"]),
            st.lists(st.sampled_from([*SIMPLE[:3], "x"]), max_size=3),
        ),
        "required": st.one_of(st.lists(st.sampled_from(["a", "b", 1]), max_size=3), TEXTS),
        "enum": st.one_of(st.lists(SCALARS, max_size=2), SCALARS),
        "examples": st.one_of(st.lists(SCALARS, max_size=2), SCALARS),
        "const": SCALARS,
        "default": SCALARS,
        "multipleOf": NUMBERS,
        "$ref": st.sampled_from(["#", "#/$defs/a", "#/a b", "a%zz", "#/%41", "", 3]),
        "$schema": st.sampled_from([DRAFT_2020_12, "http://json-schema.org/draft-07/schema#"]),
        **dict.fromkeys(["title", "description", "format", "$comment"], TEXTS),
        **dict.fromkeys(["contentEncoding", "contentMediaType", "$id", "pattern"], TEXTS),
        **dict.fromkeys(["deprecated", "readOnly", "writeOnly", "uniqueItems"], FLAGS),
        **dict.fromkeys(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"], NUMBERS),
        **dict.fromkeys(["minLength", "maxLength", "minItems", "maxItems"], COUNTS),
        **dict.fromkeys(["minProperties", "maxProperties", "minContains", "maxContains"], COUNTS),
        **dict.fromkeys(["items", "additionalProperties", "not", "contains"], schema),
        **dict.fromkeys(["propertyNames", "if", "then", "else", "contentSchema"], schema),
        **dict.fromkeys(["unevaluatedItems", "unevaluatedProperties", "$anchor"], schema),
        **dict.fromkeys(
            ["allOf", "anyOf", "oneOf", "prefixItems"],
            st.one_of(st.lists(inner, max_size=3), schema),
        ),
        **dict.fromkeys(
            ["properties", "$defs", "definitions", "dependencies", "x-vendor"],
            st.one_of(named, schema),
        ),
    }


def _schemas(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    values = values_for(inner)
    keys = st.lists(st.sampled_from(sorted(values)), unique=True, max_size=4)
    return keys.flatmap(lambda ks: st.fixed_dictionaries({k: values[k] for k in ks}))


SCHEMAS: st.SearchStrategy[Any] = st.recursive(
    st.one_of(st.booleans(), st.just({})), _schemas, max_leaves=10
)

PLAIN: list[dict[str, Any]] = [
    {
        "type": "object",
        "title": "searchArguments",
        "properties": {
            "query": {"type": "string", "title": "Query", "description": "What to find."},
            "limit": {"type": "integer", "default": 10, "minimum": 1, "maximum": 100},
            "tags": {
                "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                "default": None,
            },
            "mode": {"enum": ["fast", "full"], "type": "string"},
            "where": {"$ref": "#/$defs/Where"},
        },
        "required": ["query"],
        "additionalProperties": False,
        "$defs": {"Where": {"type": "object", "properties": {"path": {"type": "string"}}}},
    },
    {"$schema": DRAFT_2020_12, "type": "object", "properties": {}},
    {"type": ["string", "null"], "format": "date-time", "minLength": 0, "maxLength": 9},
]
NOT_PLAIN = [
    pytest.param({"type": "strin"}, id="unknown-type"),
    pytest.param({"type": []}, id="empty-type-list"),
    pytest.param({"type": ["string", "string"]}, id="type-twice"),
    pytest.param({"required": "a"}, id="required-not-a-list"),
    pytest.param({"required": ["a", "a"]}, id="required-twice"),
    pytest.param({"anyOf": []}, id="empty-anyOf"),
    pytest.param({"properties": {"a": {"type": 3}}}, id="nested-bad-type"),
    pytest.param({"minLength": -1}, id="negative-minLength"),
    pytest.param({"multipleOf": 0}, id="zero-multipleOf"),
    pytest.param({"items": [{"type": "string"}]}, id="items-array"),
    pytest.param({"title": 3}, id="title-not-a-string"),
]


def passed_quickly(schema: dict[str, Any]) -> bool:
    vetting = SchemaVetting()
    vetting.problem(schema)
    return vetting.plain == 1


def check_schema_says(schema: Any) -> str | None:
    try:
        Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return exc.message
    return None


@pytest.mark.filterwarnings("ignore:The metaschema specified by \\$schema was not found")
@settings(max_examples=600, deadline=None)
@given(SCHEMAS.filter(lambda s: isinstance(s, dict)))
def test_a_quick_yes_is_a_yes_of_the_full_check(schema: dict[str, Any]) -> None:
    """Any schema the quick check passes, check_schema passes too."""
    if passed_quickly(schema):
        assert check_schema_says(schema) is None


@pytest.mark.parametrize("schema", PLAIN)
def test_plain_tool_schemas_are_passed_without_the_metaschema(schema: dict[str, Any]) -> None:
    """The schemas tools list most are passed by the quick check (and are valid)."""
    assert check_schema_says(schema) is None
    vetting = SchemaVetting()
    assert vetting.problem(schema) is None
    assert (vetting.checked, vetting.plain) == (1, 1)


@pytest.mark.parametrize("schema", NOT_PLAIN)
def test_an_invalid_schema_goes_to_the_full_check(schema: dict[str, Any]) -> None:
    """An invalid value is not passed quickly: the full check refuses it and words why."""
    vetting = SchemaVetting()
    assert vetting.problem(schema) is not None
    assert vetting.plain == 0


def test_another_draft_goes_to_the_full_check() -> None:
    """A schema that names another draft is checked against that draft's metaschema."""
    schema: dict[str, Any] = {"$schema": "http://json-schema.org/draft-04/schema#", "required": []}
    vetting = SchemaVetting()
    assert vetting.problem(schema) is not None  # draft 4: required has minItems 1
    assert vetting.plain == 0
