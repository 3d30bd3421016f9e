"""Public names: valid for every model API, deterministic, distinct."""

from __future__ import annotations

import re

import pytest
import xxhash
from hypothesis import given
from hypothesis import strategies as st

from mcpmount.naming import MIN_NAME_LENGTH, assign, namespace_problem, public_name

VALID = re.compile(r"^[A-Za-z0-9_-]+$")

namespaces = st.from_regex(r"\A[a-z](?:[a-z0-9-]|_(?!_)){0,31}\Z").filter(
    lambda ns: namespace_problem(ns) is None
)
raw_names = st.text(min_size=0, max_size=300)
lengths = st.integers(min_value=MIN_NAME_LENGTH, max_value=128)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("read_file", "fs__read_file"),
        ("read-file", "fs__read-file"),
        ("ReadFile2", "fs__ReadFile2"),
    ],
)
def test_a_name_that_is_already_valid_is_kept_as_is(raw: str, expected: str) -> None:
    """No suffix when nothing had to change."""
    assert public_name("fs", raw) == expected


def test_a_changed_name_gets_the_xxh3_suffix_of_namespace_and_raw_name() -> None:
    """The suffix is `_` + 8 hex digits of xxh3_64(namespace NUL raw name)."""
    digest = xxhash.xxh3_64_hexdigest(b"fs\0get.file")[:8]
    assert public_name("fs", "get.file") == f"fs__get_file_{digest}"


def test_raw_names_that_sanitize_alike_get_distinct_names() -> None:
    """`get.file`, `get file` and `get/file` all sanitize to get_file, yet never collide."""
    names = {public_name("fs", raw) for raw in ["get.file", "get file", "get/file", "get_file"]}
    assert len(names) == 4


def test_a_long_name_is_shortened_within_the_limit_with_a_suffix() -> None:
    """Shortening is a change, so it is suffixed, and the result fits."""
    name = public_name("github", "x" * 200, 64)
    assert len(name) == 64
    assert name.startswith("github__xxx")
    assert re.search(r"_[0-9a-f]{8}$", name)


def test_an_empty_raw_name_still_gets_a_valid_name() -> None:
    """Even an empty string maps to something a model API accepts."""
    assert VALID.match(public_name("fs", ""))


@pytest.mark.parametrize(
    ("namespace", "problem"),
    [
        ("", "empty"),
        ("Fs", "lowercase"),
        ("1fs", "starting with a letter"),
        ("my__server", "separator"),
        ("a" * 33, "at most 32"),
        ("fs.x", "lowercase ASCII"),
        ("fs_", "not ending in '_'"),
    ],
)
def test_a_bad_namespace_is_refused_with_the_reason(namespace: str, problem: str) -> None:
    """Namespaces can never contain the separator, so they never clash."""
    reason = namespace_problem(namespace)
    assert reason is not None
    assert problem in reason
    with pytest.raises(ValueError, match="invalid namespace"):
        public_name(namespace, "tool")


def test_a_clash_inside_one_server_names_both_raw_names() -> None:
    """A raw name equal to another's suffixed form cannot silently shadow it."""
    clash = public_name("ns", "x.y").removeprefix("ns__")
    with pytest.raises(ValueError, match=r"'x\.y'.*" + re.escape(repr(clash))):
        assign("ns", ["x.y", clash])


@given(namespaces, raw_names, lengths)
def test_every_name_fits_model_apis(namespace: str, raw: str, max_length: int) -> None:
    """For arbitrary unicode input the name matches ^[A-Za-z0-9_-]{1,N}$."""
    name = public_name(namespace, raw, max_length)
    assert VALID.match(name)
    assert 1 <= len(name) <= max_length
    assert name.startswith(namespace + "__")


@given(namespaces, st.lists(raw_names, unique=True, max_size=20), st.randoms(), lengths)
def test_a_name_depends_only_on_namespace_raw_name_and_length(
    namespace: str, raws: list[str], rng: st.SearchStrategy[object], max_length: int
) -> None:
    """Other tools, and the order tools arrive in, never change a tool's name."""
    first = assign(namespace, raws, max_length)
    shuffled = list(raws)
    rng.shuffle(shuffled)  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
    assert assign(namespace, shuffled, max_length) == first
    for raw in raws:
        assert public_name(namespace, raw, max_length) in first
        assert assign(namespace, [raw], max_length) == {
            public_name(namespace, raw, max_length): raw
        }


@given(namespaces, st.lists(raw_names, unique=True, min_size=2, max_size=30), lengths)
def test_distinct_raw_names_in_one_namespace_never_share_a_name(
    namespace: str, raws: list[str], max_length: int
) -> None:
    """Sanitizing collisions are always separated by the suffix."""
    names = [public_name(namespace, raw, max_length) for raw in raws]
    assert len(set(names)) == len(names)


@given(namespaces, namespaces, raw_names, raw_names)
def test_two_namespaces_never_produce_the_same_name(
    first: str, second: str, first_raw: str, second_raw: str
) -> None:
    """The separator cannot occur inside a namespace, nor be completed by a trailing `_`."""
    if first != second:
        assert public_name(first, first_raw) != public_name(second, second_raw)


def test_a_trailing_underscore_namespace_is_refused_because_it_could_clash() -> None:
    """`a_` + `b` and `a` + `_b` would both be `a___b`."""
    assert namespace_problem("a_") is not None
    assert public_name("a", "_b") == "a___b"


def test_without_prefix_a_name_that_fits_is_its_own_public_name() -> None:
    """``prefix = false``: a raw name model APIs accept is published as it is."""
    assert public_name("fs", "read_file", prefix=False) == "read_file"
    assert assign("fs", ["a", "b-c"], prefix=False) == {"a": "a", "b-c": "b-c"}


def test_without_prefix_a_name_that_does_not_fit_still_gets_the_suffix_of_its_namespace() -> None:
    """The same sanitizing, shortening and xxh3 suffix (keyed on the namespace), minus
    the ``<namespace>__`` in front."""
    digest = xxhash.xxh3_64_hexdigest(b"fs\0get.file")[:8]
    assert public_name("fs", "get.file", prefix=False) == f"get_file_{digest}"
    long = public_name("fs", "x" * 200, 64, prefix=False)
    assert len(long) == 64
    assert long.startswith("xxx")


@given(namespaces, raw_names, lengths)
def test_without_prefix_every_name_still_fits_model_apis(
    namespace: str, raw: str, max_length: int
) -> None:
    """For arbitrary unicode input an unprefixed name matches ^[A-Za-z0-9_-]{1,N}$ too."""
    name = public_name(namespace, raw, max_length, prefix=False)
    assert VALID.match(name)
    assert 1 <= len(name) <= max_length
