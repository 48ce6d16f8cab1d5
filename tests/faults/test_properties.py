"""Properties of the parts that read untrusted text (model replies, documents, URLs), checked
on generated input; each bug they found keeps a plain example test beside them."""

import ipaddress
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from deepsift.ingest.chunking import chunk_document
from deepsift.ingest.document import Block, LoadedDocument
from deepsift.llm.structured import parse_json
from deepsift.records import Chunk
from deepsift.report.checks.claims import hold_to_evidence, unsupported
from deepsift.report.output.citations import resolve_citations
from deepsift.report.writing.cited_text import CitedSentence, CitedText, with_marks
from deepsift.text.amounts import NUMBER
from deepsift.text.marks import without_marks
from deepsift.text.untrusted import visible
from deepsift.web.fetch import FetchError, _checked_address, _parse, is_public

FAST = settings(max_examples=200, deadline=None, derandomize=True, database=None)


# --- the structured output parser: any reply is a value of the schema or a ValueError ---


class Queries(BaseModel):
    queries: list[str]


json_ish = st.text(alphabet="{}[]\",:'0123456789 aqueris\n`<>/thinkjson", max_size=80)
deep = st.integers(1, 20_000).map(lambda n: "[" * n) | st.integers(1, 20_000).map(
    lambda n: '{"queries": ' + "[" * n
)


@FAST
@given(st.one_of(st.text(), json_ish, deep))
@pytest.mark.parametrize("schema", [Queries, CitedText])
def test_any_reply_parses_to_the_schema_or_fails_cleanly(schema, reply):
    try:
        parsed = parse_json(reply, schema)
    except ValueError:
        return
    assert isinstance(parsed, schema)


def test_a_reply_nested_thousands_deep_fails_cleanly():
    # The repair closed every bracket and json.loads raised RecursionError, out of the run.
    with pytest.raises(ValueError, match="not valid Queries JSON"):
        parse_json("[" * 5000, Queries)


# --- the chunker: all text, in order, in bounded chunks that repeat at most `overlap` ---

word = st.text(alphabet="abcdefghij", min_size=1, max_size=12) | st.just("x" * 70)
sentence = st.lists(word, min_size=1, max_size=8).map(lambda w: " ".join(w) + ".")
paragraph = st.lists(sentence, min_size=1, max_size=5).map(" ".join)
section = st.tuples(st.integers(0, 2), st.lists(paragraph, min_size=1, max_size=3))


def _unique(blocks: list[tuple[int, list[str]]]) -> LoadedDocument:
    """A document whose words are all distinct (numbered), so each chunk's place is known."""
    count = iter(range(10**6))
    numbered = []
    for depth, paragraphs in blocks:
        numbered.append(Block(f"Heading {next(count)}", depth))
        for text in paragraphs:
            words = [f"{w}{next(count)}" for w in text.split(" ")]
            numbered.append(Block(" ".join(words)))
    return LoadedDocument(title="Title", blocks=numbered)


@settings(FAST, max_examples=100)
@given(st.lists(section, min_size=1, max_size=3), st.integers(40, 300), st.data())
def test_chunks_cover_every_section_in_order_within_their_size(sections, max_chars, data):
    overlap = data.draw(st.integers(0, max_chars - 1), label="overlap")
    document = _unique(sections)

    chunks = chunk_document(document, max_chars, overlap)

    assert [c.position for c in chunks] == list(range(len(chunks)))
    by_heading: dict[str, list[str]] = {}
    for chunk in chunks:
        header, body = chunk.text.split("\n\n", 1)
        assert header.startswith("Title")
        assert len(body) <= max_chars, (len(body), body)
        by_heading.setdefault(chunk.heading.rsplit(" > ", 1)[-1], []).append(body)
    heading = ""
    texts: dict[str, str] = {}
    for block in document.blocks:
        if block.heading_depth is not None:
            heading = block.text
        else:
            texts[heading] = texts.get(heading, "") + "".join(block.text.split())
    assert set(by_heading) == set(texts)
    for heading, bodies in by_heading.items():
        text, end = texts[heading], 0
        for body in bodies:  # compared without whitespace: chunks rejoin paragraphs
            squeezed = "".join(body.split())
            start = text.find(squeezed, max(0, end - overlap))
            assert 0 <= start <= end < start + len(squeezed), "a gap, a repeat beyond overlap"
            end = start + len(squeezed)
        assert end == len(text), "text after the last chunk is lost"


def _bodies(text: str, max_chars: int, overlap: int) -> list[str]:
    chunks = chunk_document(LoadedDocument("T", [Block(text)]), max_chars, overlap)
    return [c.text.split("\n\n", 1)[1] for c in chunks]


def test_a_sentence_longer_than_a_chunk_keeps_its_place():
    # Its windows were emitted before the sentences that precede it.
    bodies = _bodies("Short one here. " + "y" * 50 + " tail words.", max_chars=40, overlap=0)

    assert bodies == ["Short one here.", "y" * 40, "y" * 10 + " tail words."]


def test_a_long_paragraph_repeats_only_the_overlap():
    # Each window carried the overlap, and its chunk added the tail once more.
    bodies = _bodies("x" * 70 + "1.", max_chars=40, overlap=1)

    assert bodies == ["x" * 40, "x " + "x" * 30 + "1."]


def test_a_chunk_with_its_overlap_stays_within_max_chars():
    sentences = "aaaa bbbb. " + "c" * 30 + ". dddd eeee."
    document = LoadedDocument("T", [Block(sentences)])

    chunks = chunk_document(document, max_chars=40, overlap=20)

    assert all(len(c.text.split("\n\n", 1)[1]) <= 40 for c in chunks)
    assert "".join("".join(c.text.split("\n\n", 1)[1].split()) for c in chunks).endswith("eeee.")


# --- citation resolution: every [n] out names a Source; nothing else in the text changes ---

_ANY_MARK = re.compile(r"[ \t]*\[\d+(?:\s*[,;]\s*\d+)*\]")


def _without_marks(text: str) -> str:
    while _ANY_MARK.search(text):
        text = _ANY_MARK.sub("", text)
    return text


def _shown(documents: list[int]) -> list[Chunk]:
    return [
        Chunk(id=f"c{n}", text="t", source=f"/d{d}.md", title=f"D{d}", collection="x")
        for n, d in enumerate(documents, 1)
    ]


marked = st.text(alphabet="[]0123456789 ,;.\tab", max_size=60) | st.text(max_size=60)


@FAST
@given(marked, st.lists(st.integers(1, 3), max_size=5))
@example("a [[7]1] b", [1])
def test_every_citation_names_a_source_and_nothing_else_changes(text, documents):
    shown = _shown(documents)

    body, sources = resolve_citations(text, shown)

    assert [s.n for s in sources] == list(range(1, len(sources) + 1))
    assert {int(n) for n in re.findall(r"\[(\d+)\]", body)} == {s.n for s in sources}
    assert {c for s in sources for c in s.chunk_ids} <= {c.id for c in shown}
    assert _without_marks(body) == _without_marks(visible(text).rstrip())


def test_a_mark_formed_by_removing_another_is_removed_too():
    body, sources = resolve_citations("a [[7]1] b [1].", _shown([1]))

    assert body == "a b [1]." and [s.n for s in sources] == [1]


def test_only_the_spaces_before_a_removed_mark_go():
    body, _ = resolve_citations("Kept [1] , spaced ; made up [9].", _shown([1]))

    assert body == "Kept [1] , spaced ; made up."


# --- the claim check: never raises; a sentence whose numbers its evidence holds passes ---

figures = st.text(alphabet="0123456789.,% kmbnilo€$-", max_size=40)
prose = st.one_of(st.text(max_size=80), figures, st.integers(300, 400).map(lambda n: "9" * n))


@FAST
@given(prose, st.lists(prose, max_size=3))
def test_the_claim_check_never_raises(text, evidence):
    sentence = CitedSentence(text=text or "x", excerpts=[1, 2])

    unsupported(text, evidence)
    kept, counts = hold_to_evidence([sentence], dict(enumerate(evidence, 1)), "", None)

    assert len(kept) == 1 and counts.dropped <= 1


@FAST
@given(prose)
def test_a_sentence_whose_numbers_its_evidence_holds_passes(text):
    held = [m.group(0) for m in NUMBER.finditer(without_marks(text, " "))]

    assert unsupported(text, ["; ".join(held)], check_names=False) == []


def test_a_number_too_long_for_a_float_does_not_crash_the_check():
    long = "9" * 400  # float() is inf, and writing inf back out raised OverflowError

    assert unsupported(f"It holds {long} units.", ["No figures here."], check_names=False) == []


def test_a_sentence_with_no_text_gets_its_marks():
    assert with_marks(CitedSentence(text="", excerpts=[2])) == " [2]"


# --- the fetcher's URL guard: no private address passes, whatever its spelling ---

PRIVATE = [
    "127.0.0.0/8",
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "169.254.0.0/16",
    "100.64.0.0/10",
    "0.0.0.0/8",
]


def _spellings(address: ipaddress.IPv4Address) -> list[str]:
    a, b, c, d = address.packed
    number = int(address)
    return [
        str(address),
        str(number),  # decimal integer
        hex(number),
        f"0{a:o}.0{b:o}.0{c:o}.0{d:o}",  # octal parts
        f"{a:#x}.{b:#x}.{c:#x}.{d:#x}",
        f"{a}.{(b << 16) | (c << 8) | d}",  # two-part form
        f"[::ffff:{address}]",  # IPv4-mapped IPv6
        f"[::ffff:{number >> 16:x}:{number & 0xFFFF:x}]",
        f"[::{address}]",  # IPv4-compatible IPv6
        f"[64:ff9b::{address}]",  # NAT64
        f"[2002:{number >> 16:x}:{number & 0xFFFF:x}::1]",  # 6to4
        f"{address}.",  # trailing dot
        f"{a}。{b}。{c}。{d}",  # ideographic full stops (IDN)
    ]


@st.composite
def private_urls(draw: st.DrawFn) -> str:
    network = ipaddress.ip_network(draw(st.sampled_from(PRIVATE)))
    address = network[draw(st.integers(0, network.num_addresses - 1))]
    host = draw(st.sampled_from(_spellings(address)))
    userinfo = draw(st.sampled_from(["", "a@", "user:pass@", "example.com@"]))
    port = draw(st.sampled_from(["", ":80", ":8080"]))
    scheme = draw(st.sampled_from(["http", "https", "HTTP"]))
    return f"{scheme}://{userinfo}{host}{port}/page"


v6_private = st.sampled_from(["::1", "fe80::1", "fd00::1", "fc00::abcd", "::"])


@FAST
@given(private_urls() | v6_private.map(lambda a: f"http://[{a}]/"))
@example("http://[::127.0.0.1]/")
@example("http://[64:ff9b::10.0.0.1]/")
def test_no_private_address_passes_the_guard_whatever_its_spelling(url):
    with pytest.raises(FetchError):
        _checked_address(_parse(url), is_public, url)


@pytest.mark.parametrize("embedded", ["::127.0.0.1", "64:ff9b::a00:1", "::ffff:7f00:1"])
def test_an_ipv4_address_inside_ipv6_is_judged_as_itself(embedded):
    # ::127.0.0.1 (IPv4-compatible) and NAT64 64:ff9b::10.0.0.1 were judged global.
    assert not is_public(ipaddress.ip_address(embedded))


def test_a_public_address_passes_in_any_spelling():
    assert is_public(ipaddress.ip_address("::ffff:93.184.216.34"))
    assert is_public(ipaddress.ip_address("64:ff9b::93.184.216.34"))
