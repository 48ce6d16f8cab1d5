"""`deepsift eval retrieval|answers`: run agents over a benchmark with progress, resume, outputs;
`deepsift eval reports`: research questions and score the reports (deepsift.eval.reports);
`deepsift eval followups`: ask finished reports follow-ups and score the answers
(deepsift.eval.followups)."""

import argparse
from pathlib import Path

from deepsift.agents import AGENTS
from deepsift.cli.console import counting_progress, err, transient_progress
from deepsift.config import LENGTHS, Settings
from deepsift.errors import UserError
from deepsift.eval import NAIVE, eval_agents
from deepsift.eval.datasets import FORMATS

# The bounds every evaluation's identity names, whichever agents it runs.
_FIRST_BOUNDS = ("max_iterations", "max_searches")


def add_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "eval", help="evaluate retrieval or answers on a benchmark, or the reports"
    )
    parser.add_argument(
        "mode",
        choices=["retrieval", "answers", "reports", "followups"],
        help="what is scored: retrieval (recall by document), answers, reports (fact rubrics), "
        "followups",
    )
    parser.add_argument("--dataset", type=Path, help="retrieval, answers: the benchmark file")
    parser.add_argument(
        "--corpus",
        type=Path,
        metavar="DIR",
        help="a folder of documents, ingested as `deepsift ingest` does: retrieval and answers "
        "are scored by the documents ranked (questions name gold_sources); reports research it",
    )
    parser.add_argument(
        "--questions",
        type=Path,
        help='reports: lines {"id", "question"} researched over the '
        'collections (optional "length", "language"); followups: those, and lines {"id", '
        '"after": a report id, "question", "answer", "gold_sources"} asked after that report',
    )
    parser.add_argument("--collections", help="reports: comma-separated sources to search")
    parser.add_argument("--length", choices=LENGTHS, help="reports: length of each report")
    parser.add_argument("--format", choices=FORMATS, help="default: guessed from the file")
    parser.add_argument("--limit", type=int, help="the first N questions")
    parser.add_argument(
        "--agents", default="naive,deepsift", help=f"from {','.join(eval_agents())}"
    )
    parser.add_argument(
        "--max-iterations", type=int, default=3, help="deepsift is scored at 1..N rounds"
    )
    parser.add_argument(
        "--max-searches", type=int, default=5, help="search-o1: searches per question at most"
    )
    parser.add_argument(
        "--max-steps",
        type=int,
        help="react: actions per question at most (default: setting react_max_steps)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("eval-results"),
        help="the folder the results and summary tables go to (default: eval-results)",
    )
    parser.add_argument(
        "--judge",
        action="store_true",
        help="answers: an LLM-judge column; reports: rubric scores 1-10 (judge_base_url, "
        "judge_model; default: the research model)",
    )
    parser.set_defaults(run=run_eval)


def run_eval(args: argparse.Namespace, settings: Settings) -> int:
    if args.mode == "reports":
        return _run_reports(args, settings)
    if args.mode == "followups":
        return _run_followups(args, settings)
    if args.dataset is None:
        raise UserError(f"eval {args.mode} needs --dataset FILE")
    from deepsift.deps import Deps
    from deepsift.eval.datasets import dataset_hash, load_dataset
    from deepsift.eval.folders import NAIVE_CHUNKS, check_gold, folder_digest
    from deepsift.eval.runner import Evaluator, ResultsFile, bounds, corpus_store
    from deepsift.eval.summary import write_outputs
    from deepsift.llm.chat import chat_model
    from deepsift.llm.embedders import get_embedder

    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    unknown = sorted(set(agents) - set(eval_agents()))
    if unknown or not agents:
        choices = ", ".join(eval_agents())
        raise UserError(f"unknown agent {', '.join(unknown)}; choose from {choices}")
    for flag in ("max_iterations", "max_searches", "max_steps", "limit"):
        if getattr(args, flag) is not None and getattr(args, flag) < 1:
            raise UserError(f"--{flag.replace('_', '-')} must be at least 1")
    given = {flag: getattr(args, flag) for flag in ("max_iterations", "max_searches", "max_steps")}
    # Each agent's bound, by its name; rows carry it in their max_iterations column.
    limits = {AGENTS[a].bound: AGENTS[a].bound_for(given, settings) for a in agents if a in AGENTS}
    questions = load_dataset(args.dataset, args.format)
    if args.corpus is not None:
        check_gold(questions, args.corpus)
    elif any(q.gold_sources for q in questions):
        raise UserError(
            f"dataset {args.dataset} names gold files: give the folder that holds them with "
            "--corpus DIR"
        )
    elif not any(q.paragraphs for q in questions):
        raise UserError(
            f"dataset {args.dataset} has no context paragraphs to search; questions like FRAMES "
            "or SimpleQA need web search, which `deepsift eval` does not run yet"
        )
    selected = questions[: args.limit] if args.limit else questions
    digest = dataset_hash(args.dataset)
    needs_llm = agents != [NAIVE] or args.mode == "answers"
    identity = {
        "mode": args.mode,
        "dataset": args.dataset.name,
        "sha256": digest,
        "max_iterations": args.max_iterations,
        "max_searches": args.max_searches,
        "llm": ("embedded" if settings.uses_local_llm else settings.llm_model)
        if needs_llm
        else None,
        # Other bounds only with the agents they bound (react's max_steps): results written
        # before those agents existed keep their identity.
        **{name: value for name, value in limits.items() if name not in _FIRST_BOUNDS},
        # A folder by what it holds: results of another content are another evaluation.
        **({"corpus": folder_digest(args.corpus)} if args.corpus else {}),
    }
    expected = {a: bounds(a, args.mode, limits) for a in agents}
    results = ResultsFile(args.out, identity, expected)
    with corpus_store(settings) as store:
        embedder = get_embedder(settings)
        deps = Deps(settings, store, embedder, chat_model(settings) if needs_llm else None)
        if args.corpus is None:
            collection = _build_corpus(questions, digest, args.dataset.name, deps)
            evaluator = Evaluator(deps, collection, args.mode, limits)
        else:
            collection = _ingest_folder(args.corpus, deps)
            evaluator = Evaluator(deps, collection, args.mode, limits, NAIVE_CHUNKS)
        interrupted = _run(evaluator, agents, selected, results, args)
    ids = {q.id for q in selected}
    rows = [r for r in results.rows if r["agent"] in agents and r["id"] in ids]
    write_outputs(args.out, rows, args.mode)
    print((args.out / "summary.md").read_text(), end="")
    err.print(f"results in {args.out}/ (results.jsonl, summary.json, summary.md, recall_at_5.png)")
    if interrupted:
        err.print("interrupted: finished questions are kept; rerun the same command to resume")
        return 130
    return 0


def _ingest_folder(corpus: Path, deps) -> str:
    """The folder's collection, up to date, with a progress bar of its files."""
    from deepsift.eval.folders import folder_collection

    with transient_progress() as progress:
        task = progress.add_task(f"ingesting {corpus}", total=None)
        name, report = folder_collection(
            corpus,
            deps,
            on_start=lambda total: progress.update(task, total=total),
            on_file=lambda result: progress.advance(task),
        )
    if failed := report.count("failed"):
        err.print(f"{corpus}: {failed} file(s) could not be read and are left out", highlight=False)
    return name


def _build_corpus(questions, digest, label, deps) -> str:
    from deepsift.eval.runner import corpus_collection

    with transient_progress() as progress:
        task = progress.add_task("embedding the corpus", total=None)
        return corpus_collection(
            questions,
            digest,
            label,
            deps,
            on_progress=lambda done, total: progress.update(task, completed=done, total=total),
        )


def _run(evaluator, agents, selected, results, args) -> bool:
    """Evaluate what is not done yet; returns True when interrupted with Ctrl-C."""
    import openai

    from deepsift.eval.runner import bounds, failed, judge, record

    todo = [(a, q) for a in agents for q in selected if (a, q.id) not in results.done]
    with counting_progress() as progress:
        task = progress.add_task("evaluating", total=len(todo), failed=0)
        errors = 0
        try:
            for agent, question in todo:
                progress.update(task, description=f"{agent:8}")
                try:
                    rows = []
                    for outcome in evaluator.run(agent, question):
                        verdict = None
                        if args.judge and args.mode == "answers":
                            verdict, cost = judge(evaluator.deps, question, outcome.answer)
                            outcome.usage = outcome.usage + cost
                        row = record(agent, question, outcome, args.mode, verdict, args.corpus)
                        rows.append(row)
                except (openai.APIConnectionError, openai.AuthenticationError):
                    raise  # nothing after it can succeed: stop with the one-line error
                except Exception as e:  # one question's failure is a result, not the end
                    errors += 1
                    expected = bounds(agent, args.mode, evaluator.bounds)
                    rows = failed(agent, question, expected, e)
                results.add(rows)
                progress.update(task, advance=1, failed=errors)
        except KeyboardInterrupt:
            return True
    return False


def _run_reports(args: argparse.Namespace, settings: Settings) -> int:
    """Research every question, save its report, score it; a failed question is a row too."""
    from deepsift.deps import Deps
    from deepsift.eval import reports
    from deepsift.llm.chat import chat_model

    if args.questions is None:
        raise UserError("eval reports needs --questions FILE.jsonl")
    questions = reports.load_questions(args.questions)
    selected = questions[: args.limit] if args.limit else questions
    sources = [n.strip() for n in (args.collections or "").split(",") if n.strip()] or None
    if args.corpus is not None and sources:
        raise UserError("eval reports researches either --corpus DIR or --collections, not both")
    if args.corpus is None:
        deps = Deps.from_settings(settings)
    else:  # the folder's collection, in the evaluation store
        from deepsift.eval.runner import corpus_store
        from deepsift.llm.embedders import get_embedder

        deps = Deps(settings, corpus_store(settings), get_embedder(settings), chat_model(settings))
        sources = [_ingest_folder(args.corpus, deps)]
    judge_llm = chat_model(settings.judge_settings) if args.judge else None
    try:
        with counting_progress() as progress:
            task = progress.add_task("reports", total=len(selected), failed=0)

            def advance(rows: list[dict]) -> None:
                progress.update(task, advance=1, failed=sum("error" in row for row in rows))

            rows = reports.research_and_score(
                selected, args.out, settings, deps, sources, args.length, judge_llm, advance
            )
    finally:
        deps.store.close()
    scored = [row for row in rows if "error" not in row]
    reports.write_rows(args.out, rows)
    print(reports.summary_table(scored), end="")
    failed = len(rows) - len(scored)
    err.print(
        f"results in {args.out}/ (reports.jsonl, summary.md, reports/)"
        + (f"; {failed} question(s) failed, see reports.jsonl" if failed else "")
    )
    return 1 if failed == len(rows) else 0


def _run_followups(args: argparse.Namespace, settings: Settings) -> int:
    """Research the report questions (reusing finished runs), ask each its follow-ups, score."""
    from deepsift.deps import Deps
    from deepsift.eval import followups
    from deepsift.eval.runner import corpus_store
    from deepsift.llm.chat import chat_model
    from deepsift.llm.embedders import get_embedder

    if args.questions is None or args.corpus is None:
        raise UserError("eval followups needs --corpus DIR and --questions FILE.jsonl")
    reports, asked = followups.load(args.questions)
    asked = asked[: args.limit] if args.limit else asked

    deps = Deps(settings, corpus_store(settings), get_embedder(settings), chat_model(settings))
    try:
        sources = [_ingest_folder(args.corpus, deps)]
        with counting_progress() as progress:
            task = progress.add_task("follow-ups", total=len(asked), failed=0)
            errors = 0

            def advance(row: dict) -> None:
                nonlocal errors
                errors += "error" in row
                progress.update(task, advance=1, failed=errors)

            rows = followups.ask_and_score(reports, asked, settings, deps, sources, advance)
    finally:
        deps.store.close()
    followups.write_rows(args.out, rows)
    print(followups.summary(rows), end="")
    err.print(f"results in {args.out}/ (followups.jsonl, summary.md)")
    return 0
