"""What the question asks: its parts, read from its wording, each of which gets its own evidence,
section, key finding and sentence of the conclusion.

Imports only text, records and the checks' name rule (deepsift.report.checks.claims).
"""
