"""Multi-hop retrieval mechanics: the question's own search, fused ranking, the LLM-free hop,
follow-ups that must add a term, and sections chosen by evidence."""

from deepsift import Settings, research
from deepsift.deps import Deps
from deepsift.llm.chat import chat_model
from deepsift.llm.embedders import get_embedder
from deepsift.nodes.route import dispatch, question_searches
from deepsift.records import Chunk, Usage
from deepsift.report.writing.length import SHAPES
from deepsift.retrieval.bridge import bridge_names, names_itself, salient_names
from deepsift.retrieval.ranking import DISTINCT_LEAD, LINK_LEAD, merge_chunks, ranked, result_list
from deepsift.run.state import Route

from fake_openai import FakeOpenAI
from scripted import SUB_QUERIES, ScriptedResearcher, ScriptedSearchO1

QUESTION = "Why was Kestrel Works built, what did it cost against its budget, and did it work?"


def chunk(name: str, query: str = "q") -> Chunk:
    return Chunk(id=name, text=name, source=f"/{name}.md", title=name, collection="c", query=query)


def deps_for(tmp_path, server, sample_store) -> Deps:
    settings = Settings(data_dir=tmp_path, llm_base_url=server.url, llm_api_key="t")
    return Deps(settings, sample_store, get_embedder(settings), chat_model(settings))


def test_fused_ranking_puts_a_chunk_found_by_two_queries_above_one_found_once():
    twice, once = chunk("twice", "second"), chunk("once", "first")
    chunks: dict[str, Chunk] = {}
    for hits in ([once, chunk("x", "first")], [twice, chunk("y", "second")], [twice]):
        chunks = merge_chunks(chunks, result_list(hits))

    order = [c.id for c in ranked({"chunks": chunks, "sub_queries": ["first", "second"]})]

    # Both lead a list at rank 1; the one found again comes first, though its query came later.
    assert order[:2] == ["twice", "once"]


def test_the_question_s_own_top_hits_keep_the_lead():
    question_hits = result_list([chunk("q1"), chunk("q2"), chunk("q3")], of_question=True)
    chunks = merge_chunks(question_hits, result_list([chunk("q3"), chunk("other")]))
    chunks = merge_chunks(chunks, result_list([chunk("q3"), chunk("other")]))

    assert [c.id for c in ranked({"chunks": chunks})][:3] == ["q1", "q2", "q3"]


def test_the_first_places_go_to_distinct_documents():
    again = chunk("a again").model_copy(update={"source": "/a.md"})  # a's second chunk
    others = [chunk(f"doc{n}") for n in range(DISTINCT_LEAD)]
    chunks = result_list([chunk("a"), again, *others], of_question=True)

    order = [c.id for c in ranked({"chunks": chunks})]

    # a's second chunk waits until DISTINCT_LEAD documents have their place, then comes first.
    assert order[:DISTINCT_LEAD] == ["a", *(f"doc{n}" for n in range(DISTINCT_LEAD - 1))]
    assert order[DISTINCT_LEAD:] == ["a again", f"doc{DISTINCT_LEAD - 1}"]


def test_every_run_of_either_agent_searches_the_question_itself(tmp_path, sample_store):
    searched: list[tuple[str, str]] = []

    def collect(node, update):
        searched.extend((node, c.query) for c in update.get("chunks", {}).values())
        searched.extend((node, query) for query in update.get("sub_queries", []))

    with FakeOpenAI(ScriptedResearcher()) as server:
        deps = deps_for(tmp_path, server, sample_store)
        research(QUESTION, deps.settings, deps=deps, max_iterations=1, on_update=collect)
    assert ("search", QUESTION) in searched

    searched.clear()
    with FakeOpenAI(ScriptedSearchO1(["Kestrel Works cost"])) as server:
        deps = deps_for(tmp_path / "o1", server, sample_store)
        research(QUESTION, deps.settings, deps=deps, agent="search-o1", on_update=collect)
    assert ("reason", QUESTION) in searched and ("search", "Kestrel Works cost") in searched


def test_the_hop_follows_the_names_the_best_chunk_mentions_and_the_question_does_not():
    found = Chunk(
        id="1",
        text="Orla Venn\n\nOrla Venn is a Scottish painter. She was born in Marrowby, near "
        "Calder Bay, and studied with Tam Reid.",
        source="/orla.md",
        title="Orla Venn",
        collection="c",
    )
    question = "Where was the painter Orla Venn born?"

    # Names of several words first: a lone capitalised word is more often a nationality.
    assert bridge_names(question, [found], 3) == ["Calder Bay", "Tam Reid", "Scottish"]
    assert bridge_names(question, [found], 5)[3:] == ["Marrowby"]


def test_a_cast_list_is_several_names():
    cast = "It featured Hy Hazell, Michael Medwin and Sid James & Ada Rowe."
    assert salient_names(cast) == ["Hy Hazell", "Michael Medwin", "Sid James", "Ada Rowe"]


def test_a_question_s_first_word_is_not_a_name():
    asked = "Are Le Salamandre and Il Sorpasso both Italian films? Do they share a director?"
    assert salient_names(asked) == ["Le Salamandre", "Il Sorpasso", "Italian"]
    # "Will" and "Can" open questions but also names.
    assert salient_names("Was Will Durant born in Will County?") == ["Will Durant", "Will County"]


def test_a_possessive_is_not_part_of_the_name():
    asked = "Where did Hello Love's performer live, and was Moses' brother older than O'Neill's?"
    assert salient_names(asked) == ["Hello Love", "Moses", "O'Neill"]


def test_a_document_titled_with_a_name_is_its_page():
    assert names_itself("Henry Edwards (actor)", "henry  edwards")
    assert names_itself("Calder Bay", "Calder Bay")
    assert names_itself("Gainesville, Florida", "Gainesville")
    assert names_itself("Gainesville, Florida", "Gainesville, Florida")
    # A name read from text lost its leading article: "Which film, The Fighting Demon or ...?"
    assert names_itself("The Fighting Demon", "Fighting Demon")
    assert names_itself("A Night's Adventure", "Night'S Adventure")
    assert not names_itself("Anthem", "The Anthem Band")
    assert not names_itself("Henry Edwards Jr.", "Henry Edwards")
    assert not names_itself("Bay", "Calder Bay")


def test_the_pages_of_followed_names_come_right_after_the_question_s_lead():
    question_hits = result_list([chunk("q1"), chunk("q2"), chunk("q3")], of_question=True)
    chunks = merge_chunks(question_hits, result_list([chunk("q3"), chunk("often")]))
    chunks = merge_chunks(chunks, result_list([chunk("q3"), chunk("often")]))
    pages = [chunk(f"page{n}").model_copy(update={"link_rank": n}) for n in range(LINK_LEAD + 1)]
    chunks = merge_chunks(chunks, result_list(pages[::-1]))  # found in reverse order of rank

    order = [c.id for c in ranked({"chunks": chunks})]

    # The first LINK_LEAD pages, in the order the hop found them; the last one by its fusion.
    assert order[: 2 + LINK_LEAD] == ["q1", "q2", *(f"page{n}" for n in range(LINK_LEAD))]
    assert order.index("q3") < order.index(f"page{LINK_LEAD}")


def test_the_lead_is_the_question_s_two_best_documents_not_chunks():
    long_document = [chunk("a1").model_copy(update={"source": "/a.md"}) for _ in range(2)]
    long_document[1] = long_document[1].model_copy(update={"id": "a2"})
    question_hits = result_list([*long_document, chunk("b"), chunk("c")], of_question=True)
    page = chunk("page").model_copy(update={"link_rank": 0})
    chunks = merge_chunks(question_hits, result_list([page]))

    order = [(c.id, c.source) for c in ranked({"chunks": chunks})]

    # b, the question's second document, keeps second place; a's second chunk comes after
    # the first DISTINCT_LEAD documents.
    assert order[:4] == [("a1", "/a.md"), ("b", "/b.md"), ("page", "/page.md"), ("c", "/c.md")]
    assert order[-1] == ("a2", "/a.md")


def test_a_run_s_hop_searches_names_from_its_best_chunks(tmp_path, sample_store):
    hopped: list[str] = []

    def collect(node, update):
        if node == "hop":
            hopped.extend(c.query for c in update.get("chunks", {}).values())

    with FakeOpenAI(ScriptedResearcher()) as server:
        deps = deps_for(tmp_path, server, sample_store)
        research(QUESTION, deps.settings, deps=deps, max_iterations=1, on_update=collect)
        # No document of the sample corpus is titled with a name: names lead nowhere there,
        # and their hits are left out unless asked for.
        assert not hopped
        deps.settings.hop_unpaged_names = True
        research(QUESTION, deps.settings, deps=deps, max_iterations=1, on_update=collect)

    assert hopped and not set(hopped) & {QUESTION, *SUB_QUERIES}


def test_a_follow_up_that_adds_no_new_term_is_dropped(tmp_path, sample_store):
    reordered = "Kestrel Works built why"  # the words of a sub-query already searched
    with FakeOpenAI(ScriptedResearcher(follow_ups=[reordered])) as server:
        deps = deps_for(tmp_path, server, sample_store)
        same = research(QUESTION, deps.settings, deps=deps, max_iterations=2)
    with FakeOpenAI(ScriptedResearcher(follow_ups=["River Orrin phosphorus load"])) as server:
        deps = deps_for(tmp_path / "new", server, sample_store)
        new = research(QUESTION, deps.settings, deps=deps, max_iterations=2)

    assert same.iterations == 1 and reordered not in same.sub_queries
    assert new.iterations == 2 and "River Orrin phosphorus load" in new.sub_queries


TOPICS = [
    "history of the printing press",
    "volcanic soils of Iceland",
    "salary caps in basketball",
    "migration of monarch butterflies",
    "tax law on inherited farms",
    "opera houses of northern Italy",
    "added by reflection: tidal energy in Scotland",
]


def _painters(tmp_path) -> Deps:
    """A real Milvus Lite collection of three notes, embedded with the real embedder."""
    from deepsift.ingest.pipeline import ingest
    from deepsift.store import Store

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "venn.md").write_text(
        "# Orla Venn\n\nOrla Venn is a painter who studied with Tam Reid."
    )
    (notes / "reid.md").write_text("# Tam Reid\n\nTam Reid is a sculptor, born in Drumlee.")
    (notes / "bay.md").write_text("# Calder Bay\n\nTam Reid often painted Calder Bay at dawn.")
    settings = Settings(data_dir=tmp_path / "data")
    deps = Deps(settings, Store(settings), get_embedder(settings), None)
    ingest([notes], "notes", deps.store, deps.embedder, settings, description="notes")
    return deps


def _page(deps: Deps, title: str) -> Chunk:
    hits = deps.store.search("notes", title, deps.embedder.embed_queries([title])[0], 3)
    return next(c for c in hits if c.title == title)


def test_the_hop_marks_the_page_titled_with_a_name_it_followed(tmp_path):
    from deepsift.retrieval.hop import follow_names

    deps = _painters(tmp_path)
    question = "Where was Orla Venn's teacher born?"
    found = follow_names(question, [_page(deps, "Orla Venn")], ["notes"], deps, {})
    deps.store.close()

    pages = {c.title: c.link_rank for c in found.values()}
    assert pages["Tam Reid"] == 0 and pages.get("Calder Bay") is None


def test_the_first_hop_links_the_page_of_a_name_the_question_holds(tmp_path):
    from deepsift.retrieval.hop import follow_names

    deps = _painters(tmp_path)
    question = "Who taught Orla Venn?"
    bay, venn = _page(deps, "Calder Bay"), _page(deps, "Orla Venn")
    lead = result_list([bay], of_question=True)  # the question's search missed Venn's page
    asked = follow_names(question, [], ["notes"], deps, lead, asked=True)
    not_asked = follow_names(question, [], ["notes"], deps, lead)
    venn_leads = result_list([venn], of_question=True)
    already = follow_names(question, [], ["notes"], deps, venn_leads, asked=True)
    deps.settings.hop_names = 0
    off = follow_names(question, [], ["notes"], deps, lead, asked=True)
    deps.store.close()

    assert asked[venn.id].link_rank == 0 and not not_asked and not off
    assert already[venn.id].link_rank is None  # in the question's lead: no link needed


def test_the_first_hop_follows_the_best_hit_and_the_pages_the_question_names(tmp_path):
    from deepsift.retrieval.hop import next_hop

    deps = _painters(tmp_path)
    venn, bay = _page(deps, "Orla Venn"), _page(deps, "Calder Bay")

    def first_hop(question: str) -> list[str]:
        lead = result_list([venn, bay], of_question=True)
        return next_hop(
            {"question": question, "sources_to_search": ["notes"], "chunks": lead}, deps
        )["hopped"]

    chain = first_hop("Where was Orla Venn's teacher born?")
    pair = first_hop("Was Calder Bay painted by Orla Venn's teacher?")
    deps.store.close()

    assert chain == [venn.id]  # the second-best hit is no page the question names
    assert pair == [venn.id, bay.id]


def test_an_agent_s_search_follows_the_names_its_best_hit_mentions(tmp_path):
    from deepsift.retrieval.inline import search_routed

    deps = _painters(tmp_path)
    query = "Orla Venn studied painting"
    searched = search_routed(query, ["notes"], deps, {}, 5)
    deps.store.close()

    found, read = searched.chunks, searched.best
    page = next(c for c in found.values() if c.title == "Tam Reid" and c.link_rank is not None)
    assert page.query == "Tam Reid"  # found by the hop, not by the query
    assert read[0].query == query and "Tam Reid" in [c.title for c in read]


def test_an_agent_reads_its_query_s_best_hits_then_the_pages_linked_from_them():
    from deepsift.retrieval.inline import read_first

    own = [chunk(f"own{n}") for n in range(5)]
    pages = [chunk(f"page{n}", "name").model_copy(update={"link_rank": n}) for n in range(3)]
    own_page = own[0].model_copy(update={"link_rank": 3})  # linked too: read as a hit
    linked = {c.id: c for c in [*pages, own_page]}

    assert [c.id for c in read_first(own, linked, 5)] == ["own0", "own1", "own2", "page0", "page1"]
    assert [c.id for c in read_first(own, linked, 3)] == ["own0", "own1", "page0"]
    assert [c.id for c in read_first(own, {}, 3)] == ["own0", "own1", "own2"]


def _found(*batches: list[Chunk]) -> dict[str, Chunk]:
    chunks: dict[str, Chunk] = {}
    for batch in batches:
        chunks = merge_chunks(chunks, result_list(batch))
    return chunks


ANOMALY = "What caused the August 2024 phosphorus anomaly in Lake Veldmere?"
RESPONSE = "How did the Water Authority respond to the phosphorus anomaly in Lake Veldmere?"


def test_a_long_report_s_sub_queries_search_deeper_than_a_standard_one_s():
    deps = Deps(Settings(top_k=5), None, None, None)
    routes = [Route(query="phosphorus in the lake", sources=["science", "operations"])]

    def depths(length: str) -> set[int]:
        sends = dispatch({"report_length": length}, routes, Usage(), deps).goto
        return {send.arg["k"] for send in sends}

    assert depths("standard") == depths("brief") == {5}
    assert depths("long") == {5 * SHAPES["long"].depth} and SHAPES["long"].depth > 1


def test_a_sub_query_that_is_the_question_is_not_searched_again_where_the_question_is():
    deps = Deps(Settings(top_k=5), None, None, None)
    question = "Which RFCs promoted an aarch64 target to Tier 1?"
    state = {"question": question, "iteration": 1, "sources_to_search": ["rfcs"]}
    routes = [
        Route(query=" which rfcs promoted an aarch64  target to tier 1? ", sources=["rfcs", "web"]),
        Route(query="aarch64 Tier 1 promotion", sources=["rfcs"]),
    ]

    sends = dispatch(state, routes, Usage(), deps, question_searches(state, deps)).goto

    searched = sorted(
        (s.arg["query"].strip()[:5], s.arg["source"], s.arg["of_question"]) for s in sends
    )
    assert searched == [
        ("Which", "rfcs", True),  # the question itself, as deep as one search
        ("aarch", "rfcs", False),
        ("which", "web", False),  # the web does not search the question on its own
    ]
