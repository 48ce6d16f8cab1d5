"""Embedded model: aggregate and per-request tokens/s with 1, 2, 4 and 8 parallel slots.

Each configuration gets the same 8 requests (distinct prompts, so no cached prefix, and a fixed
number of generated tokens), sent `slots` at a time. Run it alone: llama.cpp slows several-fold
when another process shares the cores.

    python benchmarks/slots.py [--slots 1 2 4 8] [--requests 8] [--tokens 96]
"""

import argparse
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
from _common import print_table, save

from deepsift.llm.local_model import LOCAL_MODEL_NAME, LocalChatServer

TOPICS = ["lake", "bridge", "forest", "harbour", "railway", "glacier", "vineyard", "observatory"]


def prompt(n: int) -> str:
    topic = TOPICS[n % len(TOPICS)]
    facts = " ".join(
        f"Fact {i} about the {topic}: it was surveyed in {1900 + 7 * i + n}." for i in range(20)
    )
    return f"{facts}\nWrite a long paragraph about the {topic} ({n})."


def ask(base_url: str, n: int, tokens: int) -> dict:
    body = {
        "model": LOCAL_MODEL_NAME,
        "messages": [{"role": "user", "content": prompt(n)}],
        "max_tokens": tokens,
        "temperature": 0,
        "ignore_eos": True,  # llama.cpp: every request generates exactly `tokens`
    }
    reply = httpx.post(f"{base_url}/chat/completions", json=body, timeout=900).json()
    return {"usage": reply["usage"], "timings": reply.get("timings", {})}


def measure(slots: int, requests: int, tokens: int) -> dict:
    server = LocalChatServer(context=8192, slots=slots)
    try:
        ask(server.base_url, 99, 4)  # warm up
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=slots) as pool:
            replies = list(pool.map(lambda n: ask(server.base_url, n, tokens), range(requests)))
        wall = time.monotonic() - started
    finally:
        server.stop()
    generated = sum(r["usage"]["completion_tokens"] for r in replies)
    prompted = sum(r["usage"]["prompt_tokens"] for r in replies)
    per_request = [r["timings"].get("predicted_per_second", 0) for r in replies]
    return {
        "slots": slots,
        "requests": requests,
        "prompt_tokens": prompted,
        "completion_tokens": generated,
        "wall_s": round(wall, 1),
        "aggregate_tokens_per_s": round((generated + prompted) / wall, 1),
        "aggregate_generated_per_s": round(generated / wall, 1),
        "per_request_generated_per_s": round(sum(per_request) / len(per_request), 1),
        "speedup_vs_1": 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--slots", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--requests", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=96)
    args = parser.parse_args()
    rows = [measure(slots, args.requests, args.tokens) for slots in args.slots]
    for row in rows:
        row["speedup_vs_1"] = round(rows[0]["wall_s"] / row["wall_s"], 2)
    print_table(rows)
    print(f"saved {save('slots', rows)}")


if __name__ == "__main__":
    main()
