"""Every rule about a report's headings: its fixed headings in its language, which headings
a section may not have (a question, a query, the report's own, a list of sources), and how a
heading is printed."""

import re

from pydantic import BaseModel

# The headings the report writes itself. Section headings and prose come from the model in the
# report's language; these are looked up, English when the language is not listed.
_LABELS = {
    "english": (
        "Key findings",
        "Conclusion",
        "Notes",
        "Sources",
        "The sources found do not answer: {part}.",
    ),
    "german": (
        "Wichtigste Ergebnisse",
        "Fazit",
        "Hinweise",
        "Quellen",
        "Die gefundenen Quellen beantworten nicht: {part}.",
    ),
    "french": (
        "Principaux résultats",
        "Conclusion",
        "Remarques",
        "Sources",
        "Les sources trouvées ne répondent pas à : {part}.",
    ),
    "spanish": (
        "Conclusiones principales",
        "Conclusión",
        "Notas",
        "Fuentes",
        "Las fuentes encontradas no responden a: {part}.",
    ),
    "italian": (
        "Risultati principali",
        "Conclusione",
        "Note",
        "Fonti",
        "Le fonti trovate non rispondono a: {part}.",
    ),
    "portuguese": (
        "Principais conclusões",
        "Conclusão",
        "Notas",
        "Fontes",
        "As fontes encontradas não respondem a: {part}.",
    ),
    "dutch": (
        "Belangrijkste bevindingen",
        "Conclusie",
        "Opmerkingen",
        "Bronnen",
        "De gevonden bronnen beantwoorden niet: {part}.",
    ),
    "chinese": ("主要发现", "结论", "说明", "来源", "找到的来源没有回答：{part}。"),
    "japanese": (
        "主な調査結果",
        "結論",
        "注記",
        "出典",
        "見つかった資料は次の点に答えていません：{part}。",
    ),
}
# The table of the documents a report cites: its heading, then its columns.
_DOCUMENTS = {
    "english": ("Documents", "Document", "Title", "Date", "Status", "Authors", "What it says"),
    "german": ("Dokumente", "Dokument", "Titel", "Datum", "Status", "Autoren", "Inhalt"),
    "french": ("Documents", "Document", "Titre", "Date", "Statut", "Auteurs", "Ce qu'il dit"),
    "spanish": ("Documentos", "Documento", "Título", "Fecha", "Estado", "Autores", "Qué dice"),
    "italian": ("Documenti", "Documento", "Titolo", "Data", "Stato", "Autori", "Cosa dice"),
    "portuguese": ("Documentos", "Documento", "Título", "Data", "Estado", "Autores", "O que diz"),
    "dutch": ("Documenten", "Document", "Titel", "Datum", "Status", "Auteurs", "Wat het zegt"),
    "chinese": ("文件", "文件", "标题", "日期", "状态", "作者", "内容"),
    "japanese": ("文書", "文書", "タイトル", "日付", "状態", "著者", "内容"),
}
# The heading of the questions asked of a finished run, exported after its report.
_FOLLOWUPS = {
    "english": "Follow-up questions",
    "german": "Folgefragen",
    "french": "Questions complémentaires",
    "spanish": "Preguntas de seguimiento",
    "italian": "Domande di approfondimento",
    "portuguese": "Perguntas de seguimento",
    "dutch": "Vervolgvragen",
    "chinese": "后续问题",
    "japanese": "追加の質問",
}
_NAMES = {"deutsch": "german", "français": "french", "español": "spanish", "nederlands": "dutch"}
# The languages whose headings are known, as a request may name them ("in German", "auf Deutsch").
LANGUAGES = (*_LABELS, *_NAMES)


class Labels(BaseModel):
    findings: str
    conclusion: str
    notes: str
    sources: str
    unanswered: str  # a part of the question the evidence does not answer: "... {part}."
    documents: tuple[str, ...] = _DOCUMENTS["english"]  # the documents table: heading, columns
    followups: str = _FOLLOWUPS["english"]


def labels(language: str) -> Labels:
    name = language.strip().lower()
    name = _NAMES.get(name, name)
    findings, conclusion, notes, sources, unanswered = _LABELS.get(name, _LABELS["english"])
    return Labels(
        findings=findings,
        conclusion=conclusion,
        notes=notes,
        sources=sources,
        unanswered=unanswered,
        documents=_DOCUMENTS.get(name, _DOCUMENTS["english"]),
        followups=_FOLLOWUPS.get(name, _FOLLOWUPS["english"]),
    )


def echoes_query(heading: str, asked: list[str]) -> bool:
    """Whether a section heading is a question, or one of `asked` (the report's question and
    queries) in other case or punctuation: not written for a reader."""
    return heading.endswith("?") or _plain(heading) in {_plain(q) for q in asked}


def _plain(text: str) -> str:
    return text.casefold().strip(" ?.:")


def is_english(language: str) -> bool:
    """Unset counts as English: the claim check then also checks names (see claims.py)."""
    return language.strip().lower() in ("", "english", "en")


HEADING_WORDS = 12  # a "heading" longer than this is a sentence
# A heading that is only one of these words heads a list of sources ("## Sources of phosphorus
# in the lake" is a section, and stays).
SOURCES_LISTING = r"(sources|references|bibliography)[ \t]*:?[ \t]*"


def lists_sources(heading: str) -> bool:
    """True for a heading that would read as (and be removed as) a list of sources."""
    return re.fullmatch(SOURCES_LISTING, heading.strip(), re.IGNORECASE) is not None


def printed_heading(text: str, fallback: str) -> str:
    """A heading as the report prints it: one line, no Markdown marks; never one that reads as
    the report's own Sources list."""
    text = " ".join(text.replace("#", " ").replace("*", " ").split()).strip(" :.")
    if not text or len(text) > 120 or lists_sources(text):
        return fallback
    return text


def reader_heading(text: str, asked: list[str]) -> str:
    """`text` as a section heading; "" when it is a question, one of `asked` (the report's
    question, the section's queries and the report's own headings) or longer than a
    heading."""
    heading = printed_heading(text, "")
    if not heading or echoes_query(heading, asked) or len(heading.split()) > HEADING_WORDS:
        return ""
    return heading


def query_heading(query: str) -> str:
    """A section's part, in its own words, as its heading."""
    return printed_heading(query[:1].upper() + query[1:], query)


def distinct_headings(headings: list[str], fallbacks: list[str]) -> list[str]:
    """A heading that an earlier section already has is replaced by the section's fallback
    (its query heading)."""
    seen: set[str] = set()
    distinct = []
    for heading, fallback in zip(headings, fallbacks, strict=True):
        if heading.casefold() in seen:
            heading = printed_heading(fallback, heading)
        seen.add(heading.casefold())
        distinct.append(heading)
    return distinct
