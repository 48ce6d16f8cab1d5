"""The models: the chat model, an endpoint's or the embedded one (chat.py, local_model.py), the
watch on its endpoint (endpoint.py), the embedders (embedders.py), models shipped in packages
(installed.py), structured output parsed tolerantly (structured.py), the replies a run keeps so
a resumed run asks nothing twice (replies.py), and the embedder batching that batch runs share
(embed_batcher.py).

May import config, errors and records only.
"""
