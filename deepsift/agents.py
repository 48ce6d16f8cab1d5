"""The research agents a run can use (their graphs: graph.py, search_o1.py, react.py), and the
ones the evaluation adds. Light to import, so the command line can offer them as choices."""

AGENTS = ("deepsift", "search-o1", "react")
EVAL_AGENTS = ("naive", *AGENTS)  # naive: one hybrid search with the question as asked
