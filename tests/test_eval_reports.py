"""`eval reports` grades a report by rules of its own (deepsift.eval.reader, deepsift.eval.figures),
never importing the filters that wrote it, and prints the columns of
../shared/tools/score_reports.py: lead, quoted, gold_cited, of_cited."""

import pytest
from test_architecture import import_graph

from deepsift.eval.figures import unheld
from deepsift.eval.reader import defects, repeats
from deepsift.eval.reports import (
    Fact,
    ReportQuestion,
    cited_files,
    gold_shares,
    graded,
    lead,
    quoted,
    reader_counts,
    summary_table,
)

REPORT = (
    "# Editions\n\n"
    "## Key findings\n\n"
    "- RFC 2052 introduced editions in 2017 [1].\n\n"
    "## Documents\n\n"
    "| Document | Title |\n|---|---|\n| RFC 3085 | a three-year cadence |\n\n"
    "## Cadence\n\n"
    "RFC 3085 set the cadence of editions [2]. RFC 3085 says: “Editions ship every three "
    "years” [2]. Each crate chooses its own edition in Cargo.toml [2].\n\n"
    "## Conclusion\n\n"
    "Editions let the language change without breaking crates [1].\n\n"
    "## Sources\n\n"
    "[1] RFC 2052 (Evolving Rust) — `/rfcs/text/2052-epochs.md`\n\n"
    "[2] RFC 3085 (Rust 2021) — `/rfcs/text/3085-edition-2021.md`\n\n"
    "[3] Web page — `https://example.org/blog/editions.html`\n"
)
FACTS = [
    Fact(fact="in a key finding", any_of=["introduced editions"]),
    Fact(fact="a section's second sentence", any_of=["every three years"]),
    Fact(fact="a section's third sentence", any_of=["cargo.toml"]),
    Fact(fact="in the table only", any_of=["three-year cadence"]),
    Fact(fact="in the Sources only", any_of=["Evolving Rust"]),
]


def test_lead_counts_facts_a_reader_meets_first():
    # the key finding and the cadence's second sentence; not its third, the table, the Sources
    assert lead(REPORT, FACTS) == 0.4
    assert lead(REPORT, [Fact(fact="conclusion", any_of=["without breaking"])]) == 1.0


def test_quoted_is_the_share_of_sentences_that_quote_a_document():
    # five sentences of four words or more: the key finding, three of Cadence, the conclusion
    assert quoted(REPORT) == 0.2
    assert quoted(REPORT.replace("RFC 3085 set the cadence of editions [2]. ", "")) == 0.25


def test_gold_documents_are_counted_by_file_name_among_the_sources():
    assert cited_files(REPORT) == {"2052-epochs.md", "3085-edition-2021.md", "editions.html"}
    shares = gold_shares(cited_files(REPORT), ["2052-epochs.md", "0430-naming.md"])
    assert shares == {"gold_cited": 0.5, "of_cited": 0.333}
    assert gold_shares(set(), ["2052-epochs.md"]) == {"gold_cited": 0.0}  # nothing to share


def test_a_question_is_graded_on_what_it_gives():
    gold = ["2052-epochs.md", "3085-edition-2021.md"]
    full = ReportQuestion(id="q", question="Editions?", facts=FACTS, gold_sources=gold)

    assert graded(REPORT, full) == {
        "rubric": 0.8,  # all but the fact in the Sources
        "lead": 0.4,
        "gold_cited": 1.0,
        "of_cited": 0.667,
    }
    assert graded(REPORT, ReportQuestion(id="q", question="Editions?")) == {}


def test_the_summary_prints_the_new_columns_and_their_means():
    rows = [
        {"id": "a", "lead": 0.5, "gold_cited": 1.0, "of_cited": 0.5, "quoted": 0.1},
        {"id": "b", "lead": 0.25, "gold_cited": 0.5, "quoted": 0.3},  # cited nothing
    ]

    table = summary_table(rows).splitlines()

    assert table[0] == "| id | lead | gold_cited | of_cited | quoted |"
    assert table[-1] == "| **mean** | 0.375 | 0.75 | 0.5 | 0.2 |"  # of_cited: of a only
    assert "rubric" not in table[0]  # no row has it


@pytest.mark.parametrize(
    ("sentence", "kind"),
    [
        ("The goal of RFC 3085 is to reach consensus on.", "fragment"),
        ("We decided to capture all in-scope parameters.", "voice"),
        ("This EIP raises the blob target to six.", "deictic"),
        ("This proposal changes the gas cost of SLOAD.", "deictic"),
        ("Comments are at https://github.com/ethereum/EIPs/issues/8.", "markup"),
        ("[Post-1.0 blog post] (https://blog.rust-lang.org/next.html).", "markup"),
        ("1: Reviews of the two RFCs and any patches.", "markup"),
        ("Use ``cargo fix`` to migrate.", "markup"),
    ],
)
def test_the_grader_catches_each_defect(sentence, kind):
    assert kind in defects(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "RFC 3085 says: “Our goal is to see all Rust users adopt the new edition”.",
        "The US edition of the book is the same.",
        "It changes I/O traits, i.e. the reader and writer.",
        "This EIP-4844 text names itself.",
        "The `k#gen` syntax is reserved.",
    ],
)
def test_a_clean_sentence_passes_the_grader(sentence):
    assert defects(sentence) == []


def test_the_grade_counts_what_the_report_filter_lets_through():
    from deepsift.report.checks.defects import defects as filtered

    numbered = "1: Reviews of the open pull requests come first."  # a list's number left in
    assert filtered(numbered) == [] and defects(numbered) == ["markup"]


def test_a_sentence_that_says_an_earlier_one_again_is_a_repeat():
    said = [
        "RFC 2052 introduced editions to the Rust language in 2017.",
        "In 2017 RFC 2052 introduced editions to the Rust language.",
        "Editions ship every three years.",  # too short to count
        "Editions ship every three years.",
    ]
    assert repeats(said) == 1


def test_reader_counts_total_the_kinds_and_repeats_of_the_prose():
    seeded = REPORT.replace(
        "## Conclusion\n\n",
        "## Conclusion\n\nSee https://example.org [1]. We chose a three-year cadence [2].\n\n",
    )
    counts = reader_counts(seeded, "What are Rust editions?")

    assert counts["markup"] == 1 and counts["voice"] == 1
    assert counts["reader_defects"] == 2 and reader_counts(REPORT, "Editions?")["markup"] == 0


def test_a_figure_is_held_at_its_written_precision_and_a_worked_one_is_not():
    excerpt = ["The plant cost EUR 29.3 million; the budget was 25,000,000."]

    assert unheld("It cost €29.3m [1].", excerpt) == []
    assert unheld("It cost 29,312,000 euros.", excerpt) == ["29,312,000"]
    assert unheld("It went €4.3m over budget.", excerpt) == ["4.3m"]  # worked out, not cited
    assert unheld("The Kestrel Works cost €29.3m.", excerpt) == ["kestrel", "works"]
    assert unheld("The Kestrel Works cost €29.3m.", excerpt, check_names=False) == []


# The filters that write a report: a grade by their rules cannot see what they miss.
REPORT_FILTERS = (
    "deepsift.report.checks",
    "deepsift.report.evidence",
    "deepsift.report.writing",
    "deepsift.followups",
)
# What eval runs rather than grades with: the naive baseline's short answer, as an agent writes
# it; and the phrase a follow-up answer declines with.
RUNS_NOT_GRADES = {
    ("deepsift.eval.runner", "deepsift.report.writing.short_answer"),
    ("deepsift.eval.followups", "deepsift.followups.questions"),
}


def test_eval_grades_by_rules_of_its_own_never_by_the_report_filters():
    graph = import_graph()

    borrowed = sorted(
        f"{module} imports {target}"
        for module, imported in graph.items()
        if module.startswith("deepsift.eval")
        for target in imported
        if target.startswith(REPORT_FILTERS) and (module, target) not in RUNS_NOT_GRADES
    )

    assert {"deepsift.eval.reader", "deepsift.eval.figures"} <= graph["deepsift.eval.reports"]
    assert not borrowed, "eval grades by the filters that wrote the report: " + "; ".join(borrowed)
