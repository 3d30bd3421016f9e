"""A server's lists, fetched and checked: its tools, prompts and resources, taken as untrusted.

Every page a server lists is followed and checked before anything of it is mounted: its
tools (``_tools``, whose schemas ``_vetting`` checks once each, with a quick yes for the
plain ones from ``_plain_schema``) and its prompts, resources and templates
(``_content``), with what the pages said of caching them (``_freshness``). A list that
breaks a rule refuses the server whole. The connection that asks is `mcpmount.upstream`'s.
"""

from mcpmount.listing._content import ServerContent, check_content, list_content
from mcpmount.listing._freshness import Freshness
from mcpmount.listing._tools import check_tools, list_all_tools, list_pages, needs_task
from mcpmount.listing._vetting import SchemaVetting

__all__ = [
    "Freshness",
    "SchemaVetting",
    "ServerContent",
    "check_content",
    "check_tools",
    "list_all_tools",
    "list_content",
    "list_pages",
    "needs_task",
]
