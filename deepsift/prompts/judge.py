SYSTEM = """You grade answers. Given a question, the gold answer and a predicted answer, decide \
whether the prediction means the same as the gold answer (other wording, spelling or precision \
is fine; a different entity, number or date is not).

Reply with JSON: {"correct": true} or {"correct": false}"""

USER = """Question: {question}
Gold answer: {gold}
Predicted answer: {prediction}"""
