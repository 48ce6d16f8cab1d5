"""Worked ReAct examples; the ones most similar to the question go into the prompt.

Written for deepsift about invented places, people and things (none is from a benchmark), and
kept as data in react_examples.json beside this module. Each step is (thought, action, argument),
and a search step adds the excerpts it found as (title, text). The observations of calculations
are computed by the calculator when the prompt is built, so an example never shows a result the
calculator would not give.
"""

import json
from importlib.resources import files


def _step(step: list) -> tuple:
    """A step as a tuple; a search step's excerpts as (title, text) tuples."""
    thought, action, argument, *found = step
    excerpts = [[tuple(excerpt) for excerpt in found[0]]] if found else []
    return (thought, action, argument, *excerpts)


EXAMPLES: list[dict] = [
    {**example, "steps": [_step(step) for step in example["steps"]]}
    for example in json.loads(
        files(__package__).joinpath("react_examples.json").read_text(encoding="utf-8")
    )
]
