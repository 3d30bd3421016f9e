"""What the docs generate is committed, so that they read the same on GitHub as on the site:
each page's references and included parts are what ``docs/hooks/reference.py`` writes now."""

from __future__ import annotations

import importlib.util
import re
from types import ModuleType

from docs_support import ROOT, pages

HOOK = ROOT / "docs" / "hooks" / "reference.py"


def hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_reference_hook", HOOK)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_generated_part_of_the_docs_is_committed_and_current() -> None:
    """Run ``python docs/hooks/reference.py`` when this fails: it rewrites the stale pages."""
    expand = hook().expand
    stale = [
        str(page.relative_to(ROOT))
        for page in pages()
        if page.is_relative_to(ROOT / "docs") and expand(page.read_text()) != page.read_text()
    ]
    assert stale == [], f"stale generated parts in {stale}: run `python docs/hooks/reference.py`"


def test_no_page_shows_a_raw_include_or_an_empty_reference() -> None:
    """What GitHub would show as it is: a snippets line, a mkdocstrings directive, or a
    region with nothing in it."""
    raw = re.compile(r"^(--8<--|::: )|^<!-- (reference|include): .*-->\n<!-- end: ", re.M)
    shown = [str(page.relative_to(ROOT)) for page in pages() if raw.search(page.read_text())]
    assert shown == []
