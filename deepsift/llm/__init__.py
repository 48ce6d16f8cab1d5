"""The models: chat and embedding models, an endpoint's or the embedded ones (models.py),
structured output parsed tolerantly (structured.py), the replies a run keeps so a resumed run
asks nothing twice (replies.py), and the embedder batching that batch runs share
(embed_batcher.py).

May import config, errors and records only.
"""
