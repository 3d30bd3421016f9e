"""What servers tell the model, cleaned and audited.

Every listing passes a `Cleaner` (``upstream`` runs it), which strips hidden characters
(tag, bidi, zero-width, variation-selector payloads, terminal escapes) from what the model
reads, or refuses the server (``hidden_text``); every tool result, prompt and resource read
passes a `ResultCleaner`, under the same policy. `audit` reads what the mounted servers
list and how the config treats them, and returns `Finding` rows (``mcpmount audit``):
hidden text, tool shadowing, instruction-like phrasing, destructive tools without a gate,
secrets on command lines, servers without pins.

Its modules, from the bottom up: ``_findings`` (`Finding`, `Severity`), ``_hidden`` (the
cleaner), ``_results`` (the same for answers), ``_listing`` (`ServerListing`: what the
audit reads of a server), ``_phrases`` and ``_secrets`` (what the text and argument checks
look for) and ``_rules`` (the checks).
"""

from mcpmount.audit._findings import Finding, Severity
from mcpmount.audit._hidden import Cleaner, HiddenText, hidden_in
from mcpmount.audit._listing import ServerListing
from mcpmount.audit._results import ResultCleaner
from mcpmount.audit._rules import CONFIG_CHECKS, LISTING_CHECKS, ConfigCheck, ListingCheck, audit

__all__ = [
    "CONFIG_CHECKS",
    "LISTING_CHECKS",
    "Cleaner",
    "ConfigCheck",
    "Finding",
    "HiddenText",
    "ListingCheck",
    "ResultCleaner",
    "ServerListing",
    "Severity",
    "audit",
    "hidden_in",
]
