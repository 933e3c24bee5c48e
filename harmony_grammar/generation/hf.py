"""Hugging Face parts for generation: the o200k_harmony tokenizer, a tiny random model, outlines.

Everything here is built offline from the tiktoken ranks (``load_encoding()``); nothing is
downloaded. The tokenizer is checked id for id against tiktoken by ``tests/generation/test_hf.py``
(``transformers``' own ``convert_tiktoken_to_fast`` gave off-by-one special ids here).

The tiny model is a randomly initialised ``LlamaForCausalLM`` with the real vocabulary. It knows
nothing, so whatever structure its output has comes from the grammar that constrained it. A
random model spreads its probability over 200,000 tokens and would almost never close a string
or end a message, so :func:`generate_ids` adds :func:`~.sampling.token_prior`
to its logits (short tokens, quotes, brackets and control tokens are likelier); the prior only
shifts probabilities, never allows a token the grammar forbids.

Needs the ``generate`` extra (``pip install 'harmony-grammar[generate]'``; a CPU build of torch
is enough).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from ..format.tokens import FIRST_SPECIAL_ID, STOP_TOKENS, special_token_spelling
from ..format.vocabulary import load_encoding
from .sampling import token_prior

if TYPE_CHECKING:
    import outlines
    import tiktoken
    import torch
    import transformers

__all__ = [
    "PAD_TOKEN",
    "GumbelLogitsProcessor",
    "generate_ids",
    "hf_tokenizer",
    "logits_processor",
    "outlines_model",
    "stop_token_ids",
    "tiny_gpt_oss",
    "tiny_model",
]

#: gpt-oss's Hugging Face tokenizer pads with ``<|endoftext|>`` and ends with ``<|return|>``.
PAD_TOKEN = "<|endoftext|>"
_EOS_TOKEN = "<|return|>"


def stop_token_ids() -> list[int]:
    """The ids a host stops at (``<|return|>``, ``<|call|>``), sorted."""
    return sorted(token.id for token in STOP_TOKENS)


def _byte_level_names(encoding: tiktoken.Encoding) -> dict[bytes, str]:
    """Each ordinary token's byte-level BPE name (GPT-2's bytes-to-unicode spelling)."""
    import transformers.convert_slow_tokenizer as convert_slow_tokenizer

    bytes_to_unicode: Callable[[], dict[int, str]] = convert_slow_tokenizer.bytes_to_unicode
    # str.translate over the latin-1 reading of the bytes maps every byte in one C call.
    table = bytes_to_unicode()
    ranks: dict[bytes, int] = encoding._mergeable_ranks
    return {token: token.decode("latin-1").translate(table) for token in ranks}


def _merges(ranks: dict[bytes, int], names: dict[bytes, str]) -> list[tuple[str, str]]:
    """Every merge tiktoken's BPE can make, ordered as tiktoken prefers them.

    tiktoken merges the adjacent pair whose concatenation has the lowest rank; any split of a
    token into two tokens is such a pair. Listing all of them, ordered by the rank of the
    result, makes Hugging Face's BPE (lowest merge index first) choose exactly as tiktoken
    does. Keeping one "canonical" split per token is not enough: tiktoken can reach a token
    through a split that the canonical merge list lacks.
    """
    merges: list[tuple[str, str]] = []
    for token, _rank in sorted(ranks.items(), key=lambda item: item[1]):
        splits: list[tuple[int, int, str, str]] = []
        for i in range(1, len(token)):
            left, right = token[:i], token[i:]
            left_rank, right_rank = ranks.get(left), ranks.get(right)
            if left_rank is not None and right_rank is not None:
                splits.append((left_rank, right_rank, names[left], names[right]))
        splits.sort()
        merges.extend((left_name, right_name) for _, _, left_name, right_name in splits)
    return merges


def _special_spellings(encoding: tiktoken.Encoding) -> list[str]:
    # One spelling per id: tiktoken also accepts "<|reserved_200018|>" for <|endofprompt|>'s id,
    # which a Hugging Face vocabulary cannot express (one token per id); tokens.py decides.
    return [special_token_spelling(i) for i in range(FIRST_SPECIAL_ID, encoding.n_vocab)]


@functools.lru_cache(maxsize=1)
def hf_tokenizer() -> transformers.PreTrainedTokenizerFast:
    """A Hugging Face fast tokenizer equal to tiktoken's o200k_harmony, built offline.

    Ordinary text tokenizes as ``encoding.encode_ordinary``; each special token spelling
    (``<|start|>``, ``<|reserved_200100|>``, ...) is matched in text and gets its tiktoken id,
    as ``encoding.encode(text, allowed_special="all")`` does. ``len(tokenizer)`` is the model
    vocabulary size, 201,088. ``eos_token`` is ``<|return|>`` and ``pad_token``
    ``<|endoftext|>``, as in gpt-oss's own tokenizer. Building takes a few seconds, so the
    result is cached; do not mutate it.
    """
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    encoding = load_encoding()
    ranks: dict[bytes, int] = encoding._mergeable_ranks
    names = _byte_level_names(encoding)
    vocab = {names[token]: rank for token, rank in ranks.items()}
    specials = _special_spellings(encoding)
    # Special tokens sit in the BPE vocabulary at their tiktoken ids, so registering them as
    # added tokens below reuses those ids instead of appending new ones (the off-by-one trap).
    vocab.update({spelling: FIRST_SPECIAL_ID + i for i, spelling in enumerate(specials)})
    # ignore_merges: a pre-token that is itself in the vocabulary is one token, as in tiktoken.
    backend = Tokenizer(models.BPE(vocab, _merges(ranks, names), ignore_merges=True))
    backend.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(encoding._pat_str), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    backend.decoder = decoders.ByteLevel()
    backend.add_special_tokens(
        [AddedToken(spelling, special=True, normalized=False) for spelling in specials]
    )
    tokenizer_class: Any = PreTrainedTokenizerFast  # its constructor is untyped
    tokenizer: transformers.PreTrainedTokenizerFast = tokenizer_class(
        tokenizer_object=backend, eos_token=_EOS_TOKEN, pad_token=PAD_TOKEN
    )
    if len(tokenizer) != encoding.n_vocab:
        raise RuntimeError(f"tokenizer has {len(tokenizer)} tokens, expected {encoding.n_vocab}")
    return tokenizer


def tiny_model(
    *, seed: int = 0, hidden_size: int = 32, layers: int = 1
) -> transformers.LlamaForCausalLM:
    """A randomly initialised ``LlamaForCausalLM`` over the o200k_harmony vocabulary.

    The embedding has one row per token id (201,088) and is tied to the output layer, so the
    whole model is about ``201088 * hidden_size`` parameters (6.4 M at the default). Weights are
    drawn from a private generator seeded with ``seed``, so a seed names one model (and the
    global torch random state is left alone). Generation stops at
    ``<|return|>`` or ``<|call|>``.
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    encoding = load_encoding()
    pad_id = encoding.encode_single_token(PAD_TOKEN)
    config = LlamaConfig(
        vocab_size=encoding.n_vocab,
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=8192,
        tie_word_embeddings=True,
        pad_token_id=pad_id,
        eos_token_id=stop_token_ids(),
        bos_token_id=None,
    )
    # A private RNG state: building a model must not move the caller's torch random stream.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model: Any = LlamaForCausalLM(config)
    model.eval()
    model.generation_config.eos_token_id = stop_token_ids()
    model.generation_config.pad_token_id = pad_id
    return cast("transformers.LlamaForCausalLM", model)


def tiny_gpt_oss(*, seed: int = 0, untie: bool = False, head_dim: int = 16) -> Any:
    """A randomly initialised ``GptOssForCausalLM`` (attention sinks, both of gpt-oss's layer
    kinds, experts) over the o200k_harmony vocabulary: 2 layers, small enough for a CPU.

    Seeded and stopping like :func:`tiny_model`. ``untie=True`` gives the model an output
    layer of its own instead of reusing the embeddings (llama.cpp's gpt-oss loader needs
    ``output.weight``); ``head_dim`` is each attention head's width (vLLM's CPU attention
    refuses 16: give it 64). Raises ``ImportError`` where the installed transformers has no
    gpt-oss.
    """
    import torch
    from transformers import GptOssConfig, GptOssForCausalLM

    encoding = load_encoding()
    pad_id = encoding.encode_single_token(PAD_TOKEN)
    config = GptOssConfig(
        vocab_size=encoding.n_vocab,
        hidden_size=32,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=head_dim,
        num_local_experts=2,
        num_experts_per_tok=1,
        sliding_window=128,
        layer_types=["sliding_attention", "full_attention"],
        tie_word_embeddings=not untie,
        pad_token_id=pad_id,
        eos_token_id=stop_token_ids(),
        bos_token_id=None,
    )
    with torch.random.fork_rng(devices=[]):  # a seed names one model; the global stream stays
        torch.manual_seed(seed)
        model: Any = GptOssForCausalLM(config)
    model.eval()
    return model


def outlines_model(*, seed: int = 0, **model_options: int) -> outlines.models.Transformers:
    """:func:`tiny_model` wrapped with ``outlines.from_transformers`` and :func:`hf_tokenizer`."""
    import outlines

    tokenizer: Any = hf_tokenizer()  # outlines' annotation names the slow tokenizer classes
    return outlines.from_transformers(tiny_model(seed=seed, **model_options), tokenizer)


class GumbelLogitsProcessor:
    """A ``transformers`` logits processor: ``scores + bias + Gumbel noise``.

    Decoding greedily after it draws from ``softmax(scores + bias)`` (the Gumbel-max trick),
    restricted to whatever a later processor (the grammar's mask) leaves allowed. It replaces
    ``do_sample=True`` because ``torch.multinomial`` over 201,088 ids costs more on a CPU than
    the tiny model's whole forward pass. ``bias`` may be None (plain sampling).
    """

    def __init__(self, bias: Any = None, *, seed: int = 0) -> None:
        import torch

        self._bias = None if bias is None else torch.tensor(bias, dtype=torch.float32)
        self._generator = torch.Generator().manual_seed(seed)

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        """Return the noisy scores (a new tensor; ``scores`` is left as it was)."""
        import torch

        # Drawn on the CPU so a seed gives the same noise on any device.
        uniform = torch.rand(scores.shape, generator=self._generator, dtype=torch.float32)
        # -log(-log(u)) is Gumbel(0, 1); u == 0 would give -inf, which is harmless here.
        noisy = scores.float() - torch.log(-torch.log(uniform)).to(scores.device)
        if self._bias is not None:
            if self._bias.device != scores.device:
                self._bias = self._bias.to(scores.device)
            noisy += self._bias[: scores.shape[-1]]
        return noisy


@functools.lru_cache(maxsize=4)
def _llguidance_backend(model: outlines.models.Transformers) -> Any:
    # outlines builds llguidance's tokenizer from the Hugging Face one for every Generator
    # (seconds for 200k tokens); one backend per model builds it once.
    from outlines.backends.llguidance import LLGuidanceBackend

    return LLGuidanceBackend(model)


def logits_processor(model: outlines.models.Transformers, output_type: Any) -> Any:
    """outlines' logits processor for ``output_type`` on ``model``.

    An ``outlines.types.CFG`` (what ``to_outlines`` returns) goes to outlines' llguidance
    backend, built once per model; any other output type goes through ``outlines.Generator``.
    """
    import outlines

    if isinstance(output_type, outlines.types.CFG):
        return _llguidance_backend(model).get_cfg_logits_processor(output_type.definition)
    generator: Any = outlines.Generator(model, output_type)
    processor = generator.logits_processor
    if processor is None:
        raise ValueError(f"{type(output_type).__name__} gives no logits processor")
    return processor


def generate_ids(
    model: outlines.models.Transformers,
    prompt_ids: Sequence[int],
    output_type: Any,
    *,
    seed: int = 0,
    max_new_tokens: int = 256,
    prior: bool = True,
) -> list[int]:
    """Generate token ids after ``prompt_ids`` under outlines' grammar constraint.

    ``output_type`` is what ``outlines.Generator`` takes (``to_outlines(tools)`` gives a
    ``CFG``), or a processor from :func:`logits_processor` (reuse one to skip compiling the
    grammar again). ``transformers`` decodes with it (``seed`` fixes the draw, see
    :class:`GumbelLogitsProcessor`) and the new
    ids come back, stop token included. outlines' own ``generator(prompt)`` returns text
    decoded with ``skip_special_tokens=True``, which drops every control token; ids are what a
    Harmony host reads. ``prior`` adds :func:`~.sampling.token_prior` for a
    random model (leave it off for a trained one).
    """
    import torch
    from outlines.processors.base_logits_processor import OutlinesLogitsProcessor
    from transformers import LogitsProcessorList

    processor = (
        output_type
        if isinstance(output_type, OutlinesLogitsProcessor)
        else logits_processor(model, output_type)
    )
    processor.reset()
    noise = GumbelLogitsProcessor(token_prior() if prior else None, seed=seed)
    hf_model: Any = model.model
    device = hf_model.device
    with torch.no_grad():
        output = hf_model.generate(
            input_ids=torch.tensor([list(prompt_ids)], dtype=torch.long, device=device),
            attention_mask=torch.ones((1, len(prompt_ids)), dtype=torch.long, device=device),
            # Noise first, mask last: the mask's -inf survives any finite shift.
            logits_processor=LogitsProcessorList([noise, processor]),
            do_sample=False,
            max_new_tokens=max_new_tokens,
        )
    return [int(token) for token in output[0, len(prompt_ids) :]]
