"""What a reader stops at in a report's sentence: a fragment cut before what it introduces, a
document's own voice ("we", "our") printed as the report's, a document named only as "this
proposal", and its source's markup."""

import re

# Words a sentence cannot end on: it was cut before what it introduces ("... consensus on:").
_END_WORDS = set(
    """by on of to for with from the a an and or but that as is are was were be into at than
    such including include includes whether which who whose its their this these those via
    per about between""".split()
)
DOCUMENT_KINDS = (
    "document|proposal|paper|report|article|section|page|specification|spec|note|memo|"
    "standard|study|review|chapter|guide"
)
# "this RFC", "this proposal": the document a sentence is in, unnamed.
DEICTIC = re.compile(rf"\b([Tt])his ((?:[A-Z]{{2,5}})|{DOCUMENT_KINDS})\b")
_VOICE = re.compile(r"\b(we|our|us|ours|I|my)\b", re.IGNORECASE)
_QUOTED = re.compile(r"[\"“][^\"”]*[\"”]")
_US = re.compile(r"\bU\.?S\.?\b")  # "US" is a country, not a voice
_MARKUP = re.compile(
    r"``|`_|:[a-z]+:`|\[#[^\]]*\]_|\]_\B|</?[a-zA-Z][a-zA-Z0-9]*(\s[^>]*)?>|https?://\S"
)  # ... and a bare address: a reader cannot follow it in a sentence, the citation leads on


def defects(sentence: str) -> list[str]:
    """What a reader would catch in the sentence: "fragment" (cut before what it
    introduces), "voice" (a document's we/our outside a quotation), "deictic" (a document
    named only as "this RFC"), "markup"."""
    unquoted = _QUOTED.sub("", sentence)
    found = []
    words = re.findall(r"[A-Za-z0-9']+", sentence.rstrip(".!?:;,"))
    if (words and words[-1].lower() in _END_WORDS) or sentence.rstrip().endswith((":", ",", ";")):
        found.append("fragment")
    if _VOICE.search(unquoted) and not _US.search(sentence):
        found.append("voice")
    if (deictic := DEICTIC.search(unquoted)) and not _names_itself(sentence, deictic[2]):
        found.append("deictic")
    if _MARKUP.search(sentence):
        found.append("markup")
    return found


def _names_itself(sentence: str, kind: str) -> bool:
    """'This RFC' beside 'RFC 3085' is named already."""
    return kind.isupper() and bool(re.search(rf"\b{kind}[- ]?\d", sentence))
