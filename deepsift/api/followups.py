"""Follow-ups on a finished run: a question answered from its evidence, or its report
rewritten; kept in the run's thread."""

import threading
import time

from langgraph.types import Overwrite

from deepsift.api.limits import check_question
from deepsift.api.results import FollowUpResult, followup_result
from deepsift.api.threads import resources, saved_thread
from deepsift.api.versions import keep_latest_checkpoint, numbering, with_version
from deepsift.config import Settings
from deepsift.deps import Deps
from deepsift.errors import UserError
from deepsift.followups.questions import answer_followup
from deepsift.followups.rewrites import reshaped_report, reshaping
from deepsift.llm import replies
from deepsift.llm.endpoint import cancelled_by

# The agents whose reports can be rewritten (deepsift.followups.rewrites); the answering agents'
# short reports are an answer and its findings.
RESHAPED = ("deepsift",)


def ask(
    thread_id: str,
    question: str = "",
    settings: Settings | None = None,
    *,
    deps: Deps | None = None,
    keep: bool = True,
    cancel: threading.Event | None = None,
) -> FollowUpResult:
    """Ask the finished run `thread_id` a follow-up `question`, answered in one model call
    from its evidence and a new search of its sources (deepsift.followups.questions), or have its
    report rewritten ("shorter", "in German",
    "as a table", "add a section on X": deepsift.followups.rewrites). The exchange is kept in the
    thread (`keep`; off: answered from the run's evidence and forgotten, as evaluation asks),
    written once it is done; one stopped part way is answered again by asking again (or with
    no question), from the model replies it had already received."""
    check_question(question)
    settings = settings or Settings()
    if not settings.checkpoint_path.exists():
        raise UserError(
            f"no run has thread id {thread_id}: {settings.checkpoint_path} holds no runs"
        )
    with resources(settings, deps, True) as (deps, saver):
        agent, graph, saved = saved_thread("deepsift", deps, saver, thread_id)
        if not saved.values:
            raise UserError(f"no run has thread id {thread_id}; deepsift runs lists the runs kept")
        if saved.next:
            raise UserError(
                f"run {thread_id} has not finished: finish it first with "
                f"deepsift research --thread {thread_id}"
            )
        question = question.strip() or saved.values.get("asking", "")
        if not question:
            raise UserError("the question is empty")
        shape = reshaping(question)
        if shape and agent not in RESHAPED:
            raise UserError(
                f"run {thread_id} was made by {agent}, whose report is a short answer with its "
                f"findings: only {', '.join(RESHAPED)} reports can be rewritten; ask a question"
            )
        config = {"configurable": {"thread_id": thread_id}}
        if keep and saved.values.get("asking") != question:
            graph.update_state(config, {"asking": question})  # a kill now leaves it to resume
        kept = f"{thread_id}/ask"
        started = time.monotonic()
        with replies.kept_for(kept), cancelled_by(cancel):
            if shape:
                record, added = reshaped_report(saved.values, question, shape, deps)
            else:
                record, added = answer_followup(saved.values, question, deps)
        record = record.model_copy(update={"seconds": round(time.monotonic() - started, 2)})
        with numbering(settings.checkpoint_path):
            now = graph.get_state(config).values  # another rewrite may have ended meanwhile
            followups, note = with_version(
                now.get("followups", []), record, settings.max_report_versions
            )
            record = followups[-1]
            if keep:
                notes = [note] if note and note not in now.get("notes", []) else []
                update = {"followups": Overwrite(followups), "chunks": added, "asking": ""}
                graph.update_state(config, {**update, "notes": notes})
                keep_latest_checkpoint(saver, thread_id)
        if isinstance(deps.llm.cache, replies.RunReplies):
            deps.llm.cache.forget(kept)
    return followup_result(record, thread_id, record.version)
