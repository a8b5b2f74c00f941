"""Writes a tiny llama-architecture GGUF with random weights (fixed seed): a real model file for
real inference servers in the tests, made here instead of downloaded.

Run with the model servers' own Python (it needs ``gguf`` and ``numpy``, which the project does
not): ``python tiny_gguf.py OUT.gguf [--endless]``.

The weights are random, so the text means nothing; the tests assert shapes and outcomes only.
Two things are arranged so that answers are usable:

- **Answers end.** Attention and feed-forward outputs are scaled far down, so the last hidden
  state is (nearly) the current token's embedding, and the output head maps each embedding to
  one next token with a wide margin: any token leads to ``Hi``, then `` there``, ``.``, and
  ``<|im_end|>`` (or, where a grammar forbids the stop, ``<tool_call>`` and a line break).
  Greedy or sampled, every free answer is three tokens and a stop; ``--endless`` makes ``.``
  lead back to ``Hi`` instead, for tests that need a stream to still be running.
- **Grammar-forced tool calls are valid.** Where a server constrains the output with a grammar
  (a forced tool, ``tool_choice: required``), the tokens the grammar allows are chosen among
  near-equal logits, and the byte tokens can spell any JSON.

The chat template is ChatML with tools in the Hermes/Qwen style (``<tools>`` in the system
message, calls as ``<tool_call>{"name": ..., "arguments": ...}</tool_call>``, results in
``<tool_response>``), so llama.cpp's server recognises a tools-capable template.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import gguf  # type: ignore[import-not-found]
import numpy as np

SEED = 28
N_EMBD = 64
N_HEAD = 4
N_LAYER = 2
N_FF = 128
N_CTX = 8192
MARGIN = 24.0
QUIET = 1e-3  # scale of attention and feed-forward outputs: the residual stays the embedding

SPECIAL = ["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"]
WORDS = ["▁Hi", "▁there", ".", "▁", "<tool_call>"]

CHAT_TEMPLATE = (
    "{% if tools %}"
    "<|im_start|>system\n"
    "{% if messages[0].role == 'system' %}{{ messages[0].content }}\n\n{% endif %}"
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
    "{% for tool in tools %}\n{{ tool | tojson }}{% endfor %}\n</tools>\n\n"
    "For each function call, return a json object with function name and arguments within "
    '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, '
    '"arguments": <args-json-object>}\n</tool_call><|im_end|>\n'
    "{% elif messages[0].role == 'system' %}"
    "<|im_start|>system\n{{ messages[0].content }}<|im_end|>\n"
    "{% endif %}"
    "{% for message in messages %}"
    "{% if message.role == 'user' or (message.role == 'assistant' and not message.tool_calls) %}"
    "<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n"
    "{% elif message.role == 'assistant' %}"
    "<|im_start|>assistant\n{% if message.content %}{{ message.content }}{% endif %}"
    "{% for call in message.tool_calls %}"
    "{% set fn = call.function if call.function is defined else call %}"
    '\n<tool_call>\n{"name": "{{ fn.name }}", "arguments": '
    "{% if fn.arguments is string %}{{ fn.arguments }}{% else %}{{ fn.arguments | tojson }}"
    "{% endif %}}\n</tool_call>"
    "{% endfor %}<|im_end|>\n"
    "{% elif message.role == 'tool' %}"
    "{% if loop.first or messages[loop.index0 - 1].role != 'tool' %}<|im_start|>user{% endif %}"
    "\n<tool_response>\n{{ message.content }}\n</tool_response>"
    "{% if loop.last or messages[loop.index0 + 1].role != 'tool' %}<|im_end|>\n{% endif %}"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def vocabulary() -> tuple[list[str], list[int], list[float]]:
    tokens, types, scores = [], [], []
    for name in SPECIAL:
        tokens.append(name)
        types.append(gguf.TokenType.UNKNOWN if name == "<unk>" else gguf.TokenType.CONTROL)
        scores.append(0.0)
    for byte in range(256):
        tokens.append(f"<0x{byte:02X}>")
        types.append(gguf.TokenType.BYTE)
        scores.append(0.0)
    for n, word in enumerate(WORDS):
        tokens.append(word)
        types.append(gguf.TokenType.NORMAL)
        scores.append(-float(n))
    return tokens, types, scores


def weights(vocab: list[str], *, endless: bool) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(SEED)
    index = {token: n for n, token in enumerate(vocab)}
    chain = ["▁Hi", "▁there", ".", "<|im_end|>"]
    # One direction per chain state; every other token shares the "anything" direction.
    basis = np.linalg.qr(rng.standard_normal((N_EMBD, N_EMBD)))[0].T
    state_of = {token: n + 1 for n, token in enumerate(chain[:-1])}
    state_of["<tool_call>"] = len(chain)
    embedding = 0.05 * rng.standard_normal((len(vocab), N_EMBD))
    for token, n in index.items():
        embedding[n] += basis[state_of.get(token, 0)]
    # h = RMSNorm(embedding) ~ sqrt(N_EMBD) * direction; the head turns state s into next(s).
    scale = MARGIN / np.sqrt(N_EMBD)
    output = 0.01 * rng.standard_normal((len(vocab), N_EMBD))
    nexts = {
        0: "▁Hi",
        1: "▁there",
        2: ".",
        3: "▁Hi" if endless else "<|im_end|>",
        len(chain): "<0x0A>",  # a tool call's tag is followed by its line break
    }
    for state, token in nexts.items():
        output[index[token]] += scale * basis[state]
    # Second choice after ".": where a grammar forbids the stop (llama-server's
    # tool_choice: required), the model opens a Hermes tool call.
    output[index["<tool_call>"]] += 0.5 * scale * basis[3]
    # Second choice after anything else: the stop, so a grammar that allows it (the end of a
    # tool call) ends the answer there.
    if not endless:
        output[index["<|im_end|>"]] += 0.5 * scale * basis[0]
    tensors: dict[str, np.ndarray] = {
        "token_embd.weight": embedding,
        "output_norm.weight": np.ones(N_EMBD),
        "output.weight": output,
    }
    for layer in range(N_LAYER):
        block = f"blk.{layer}"
        tensors[f"{block}.attn_norm.weight"] = np.ones(N_EMBD)
        tensors[f"{block}.ffn_norm.weight"] = np.ones(N_EMBD)
        for name in ("attn_q", "attn_k", "attn_v"):
            tensors[f"{block}.{name}.weight"] = rng.standard_normal((N_EMBD, N_EMBD)) / 8
        tensors[f"{block}.attn_output.weight"] = QUIET * rng.standard_normal((N_EMBD, N_EMBD))
        tensors[f"{block}.ffn_gate.weight"] = rng.standard_normal((N_FF, N_EMBD)) / 8
        tensors[f"{block}.ffn_up.weight"] = rng.standard_normal((N_FF, N_EMBD)) / 8
        tensors[f"{block}.ffn_down.weight"] = QUIET * rng.standard_normal((N_EMBD, N_FF))
    return {name: value.astype(np.float32) for name, value in tensors.items()}


def write(path: Path, *, endless: bool = False) -> None:
    tokens, types, scores = vocabulary()
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("mineclaw-tiny-random" + ("-endless" if endless else ""))
    writer.add_context_length(N_CTX)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_LAYER)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD)
    writer.add_rope_dimension_count(N_EMBD // N_HEAD)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_scores(scores)
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(SPECIAL.index("<|im_end|>"))
    writer.add_add_bos_token(False)
    # No "▁" before text that follows a special token: llama.cpp feeds the generation prompt
    # through the tool-call grammar, which has no such space.
    writer.add_add_space_prefix(False)
    writer.add_chat_template(CHAT_TEMPLATE)
    for name, value in weights(tokens, endless=endless).items():
        writer.add_tensor(name, value)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--endless", action="store_true")
    args = parser.parse_args(argv)
    write(args.out, endless=args.endless)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
