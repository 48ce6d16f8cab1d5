"""After the report: a follow-up question on a finished run answered from its evidence
(questions), and the report rewritten from the same evidence (rewrites).

May import report and everything below it; never nodes, agents or anything above them.
"""
