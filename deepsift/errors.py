"""Failures a user can fix. The command line shows their message as one line, exit status 2."""


class UserError(Exception):
    """Bad input, a missing collection, an unreachable or misconfigured service."""
