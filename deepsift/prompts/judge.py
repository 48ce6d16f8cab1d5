SYSTEM = """You grade answers. Given a question, the gold answer and a predicted answer, decide \
whether the prediction means the same as the gold answer (other wording, spelling or precision \
is fine; a different entity, number or date is not).

Reply with JSON: {"correct": true} or {"correct": false}"""

USER = """Question: {question}
Gold answer: {gold}
Predicted answer: {prediction}"""

REPORT_SYSTEM = """You grade a research report written for the question below. Score each \
quality from 1 (poor) to 10 (excellent):
- comprehensiveness: covers every part of the question;
- depth: explains causes and figures, not only lists facts;
- instruction_following: answers the question that was asked, and nothing else;
- readability: clear structure, headings, no repetition.

Reply with JSON: {"comprehensiveness": 7, "depth": 6, "instruction_following": 8, \
"readability": 7}"""

REPORT_USER = """Question: {question}

Report:
{report}"""
