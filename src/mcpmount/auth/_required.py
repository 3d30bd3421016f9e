"""The one thing of OAuth every url server's transport knows: a login only a person can give."""

__all__ = ["LoginRequired"]


class LoginRequired(Exception):
    """The server wants a login that only a person can give: run ``mcpmount login NS``."""
