"""One embedder shared by many questions in flight: their embedding requests are served together.

As in Search-o1's batch inference, retrieval requests of questions that wait at the same time go
to the model as one batch. The first caller becomes the leader: it waits `window` seconds for
others to arrive, embeds everything pending in one call, and keeps serving what arrived in the
meantime until nothing is left. The others just wait for their share of the result.
"""

import threading
import time
from concurrent.futures import Future

from deepsift.llm.embedders import Embedder


class EmbedBatcher:
    def __init__(self, embedder: Embedder, window: float = 0.005) -> None:
        self.name = embedder.name
        self.dim = embedder.dim
        self.cosine_offset = embedder.cosine_offset
        self.cuts = embedder.cuts
        self._embedder = embedder
        self._window = window
        self._lock = threading.Lock()
        self._pending: list[tuple[list[str], bool, Future]] = []  # texts, are queries, result
        self._serving = False
        self.requests = 0  # embed() calls received
        self.model_calls = 0  # batches sent to the model

    def embed(self, texts: list[str]) -> list[list[float]]:
        return self._request(texts, queries=False)

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        return self._request(texts, queries=True)

    def _request(self, texts: list[str], queries: bool) -> list[list[float]]:
        future: Future = Future()
        with self._lock:
            self.requests += 1
            self._pending.append((texts, queries, future))
            lead = not self._serving
            self._serving = True
        if lead:
            time.sleep(self._window)
            self._serve_until_idle()
        return future.result()

    def _serve_until_idle(self) -> None:
        while True:
            with self._lock:
                pending, self._pending = self._pending, []
                if not pending:
                    self._serving = False
                    return
            for queries in (True, False):  # one model call for the queries, one for documents
                batch = [(texts, future) for texts, q, future in pending if q == queries]
                if batch:
                    self._serve(batch, queries)

    def _serve(self, batch: list[tuple[list[str], Future]], queries: bool) -> None:
        with self._lock:
            self.model_calls += 1
        texts = [text for request, _ in batch for text in request]
        embed = self._embedder.embed_queries if queries else self._embedder.embed
        try:
            vectors = embed(texts) if texts else []
        except Exception as e:  # every waiting caller sees the failure, none hangs
            for _, future in batch:
                future.set_exception(e)
            return
        start = 0
        for request, future in batch:
            future.set_result(vectors[start : start + len(request)])
            start += len(request)
