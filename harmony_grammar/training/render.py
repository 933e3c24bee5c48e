"""Rendering a conversation for fine-tuning: token ids, the assistant mask and the labels.

The ids are the renderer's (``render(conversation, training=True, tokens=True)``), so they are
token-exact with openai-harmony's ``render_conversation_for_training`` for the same messages.
The mask is 1 on exactly the tokens the model samples and 0 elsewhere (docs/training.md has a
picture):

* a *generation* is a run of consecutive assistant messages: the model samples it in one go,
  from the prompt's ``<|start|>assistant`` to a stop token. Its mask starts after that
  ``<|start|>assistant`` (the host wrote it) and runs up to and including the run's last
  terminator, the ``<|start|>assistant`` headers of its later messages included (the model
  wrote those);
* a *turn* is the assistant's answer to one user (or system/developer) message: every
  generation up to the next such message. Tool results inside a turn are never masked in.

``train_on`` picks what is masked in: every generation (``all``), the generations of the last
turn (``last``, the default), or only the assistant's ``final`` messages (``final``), each from
after its ``<|start|>assistant``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from ..base.enums import StrEnum
from ..format.model import Message, Role
from ..format.tokens import ControlToken
from ..rendering.conversation import Conversation, ConversationItem, DeveloperContent, SystemContent
from ..rendering.options import RenderKeywords, RenderOptions
from ..rendering.renderer import (
    _dropped,
    _joined,
    developer_text,
    encode_text,
    message_pieces,
    rendered_messages,
    system_text,
)

if TYPE_CHECKING:
    import tiktoken
    from typing_extensions import Unpack

__all__ = [
    "IGNORE_INDEX",
    "DropScope",
    "TrainOn",
    "TrainingExample",
    "render_training",
    "trained_turn_start",
]

#: The label of a token left out of the loss: PyTorch's ``CrossEntropyLoss`` default
#: ``ignore_index``, which transformers and TRL use too.
IGNORE_INDEX = -100


class TrainOn(StrEnum):
    """Which assistant tokens are masked in (see the module docstring)."""

    ALL = "all"
    LAST = "last"
    FINAL = "final"


class DropScope(StrEnum):
    """Where ``auto_drop_analysis`` may drop chain of thought in a training example.

    ``earlier-turns`` (the default) evaluates the drop rule on the prompt of the last turn (the
    conversation before it), as a host does when it asks the model for that turn, and never
    touches the last turn. ``conversation`` evaluates it on the whole conversation, exactly as
    openai-harmony's ``render_conversation_for_training`` does: that drops the analysis of a
    single-turn conversation's only answer, the very reasoning one wants to train on.
    """

    EARLIER_TURNS = "earlier-turns"
    CONVERSATION = "conversation"


@dataclass(frozen=True)
class TrainingExample:
    """One rendered training example.

    ``input_ids`` are o200k_harmony ids; ``assistant_masks[i]`` is 1 when the model samples
    ``input_ids[i]`` in a chosen turn, else 0 (the name is the column TRL's ``SFTTrainer``
    reads); ``spans`` are the masked-in runs as half-open ``(start, end)`` token ranges;
    ``text`` is the rendered Harmony text. The lists are shared, not copied: do not mutate them.
    """

    input_ids: list[int]
    assistant_masks: list[int]
    spans: tuple[tuple[int, int], ...]
    text: str

    @property
    def labels(self) -> list[int]:
        """``input_ids`` where masked in, :data:`IGNORE_INDEX` (-100) elsewhere."""
        return [
            token if keep else IGNORE_INDEX
            for token, keep in zip(self.input_ids, self.assistant_masks, strict=True)
        ]

    @property
    def trained_tokens(self) -> int:
        """How many tokens are masked in."""
        return sum(end - start for start, end in self.spans)

    def __len__(self) -> int:
        return len(self.input_ids)

    def truncated(
        self, max_length: int, encoding: tiktoken.Encoding | None = None
    ) -> TrainingExample:
        """The first ``max_length`` tokens, spans cut to fit. ``text`` becomes the kept ids
        decoded with ``encoding`` (a character cut mid-way reads as U+FFFD), or stays whole
        when no encoding is given."""
        if len(self.input_ids) <= max_length:
            return self
        ids = self.input_ids[:max_length]
        spans = tuple(
            (start, min(end, max_length)) for start, end in self.spans if start < max_length
        )
        text = self.text if encoding is None else encoding.decode(ids)
        return TrainingExample(ids, self.assistant_masks[:max_length], spans, text)


def _breaks_turn(item: ConversationItem | Message) -> bool:
    """A user, system or developer message starts a new turn; tool results do not."""
    if isinstance(item, (SystemContent, DeveloperContent)):
        return True
    return item.role in (Role.USER, Role.SYSTEM, Role.DEVELOPER)


def _is_assistant(item: ConversationItem | Message) -> bool:
    return isinstance(item, Message) and item.role is Role.ASSISTANT


def trained_turn_start(items: Sequence[ConversationItem | Message]) -> int:
    """The index where the last turn starts: just after the last user, system or developer
    message before the last assistant message (0 when there is none, len when no assistant)."""
    last_assistant = next(
        (i for i in range(len(items) - 1, -1, -1) if _is_assistant(items[i])), None
    )
    if last_assistant is None:
        return len(items)
    for i in range(last_assistant - 1, -1, -1):
        if _breaks_turn(items[i]):
            return i + 1
    return 0


#: Rendered system and developer texts by the ``repr`` of their content: a dataset repeats
#: the same tools in every record, and their TypeScript is the costliest part of a render.
_STRUCTURED_TEXTS: dict[str, str] = {}
_STRUCTURED_TEXTS_MAX = 1024


def _structured_text(item: SystemContent | DeveloperContent, has_functions: bool) -> str:
    key = f"{has_functions}{item!r}"
    text = _STRUCTURED_TEXTS.get(key)
    if text is None:
        if len(_STRUCTURED_TEXTS) >= _STRUCTURED_TEXTS_MAX:
            _STRUCTURED_TEXTS.clear()
        if isinstance(item, SystemContent):
            text = system_text(item, has_function_tools=has_functions)
        else:
            text = developer_text(item)
        _STRUCTURED_TEXTS[key] = text
    return text


def _resolved(items: Sequence[ConversationItem]) -> Conversation:
    """The conversation with system and developer contents as the text messages the renderer
    makes of them (``rendered_messages`` writes a text message as it is)."""
    has_functions = any(isinstance(i, DeveloperContent) and i.has_function_tools for i in items)
    return Conversation(
        tuple(
            Message(
                Role.SYSTEM if isinstance(item, SystemContent) else Role.DEVELOPER,
                _structured_text(item, has_functions),
            )
            if isinstance(item, (SystemContent, DeveloperContent))
            else item
            for item in items
        )
    )


def _training_messages(
    conversation: Conversation, options: RenderOptions, drop_scope: DropScope
) -> tuple[Message, ...]:
    profile = options.spec
    if not profile.standard_drop or profile.drop_rule is not None:
        # A profile with its own history rules (the HF template, OMP) or its own drop rule
        # (vLLM) decides dropping itself: it gets the conversation as it is.
        return rendered_messages(conversation, options)
    if not options.drops_analysis or drop_scope is DropScope.CONVERSATION:
        return rendered_messages(_resolved(conversation.messages), options)
    items = conversation.messages
    # The rule decides on the prompt of the last turn, as it did when the model wrote it.
    dropped = _dropped(items[: trained_turn_start(items)], options.rule)
    kept = _resolved([item for i, item in enumerate(items) if i not in dropped])
    return rendered_messages(kept, options, auto_drop_analysis=False)


def _trained(messages: Sequence[Message], train_on: TrainOn) -> list[tuple[bool, bool]]:
    """Per message: (is any of it masked in, is its ``<|start|>assistant`` masked in)."""
    is_assistant = [m.role is Role.ASSISTANT for m in messages]
    last_turn = trained_turn_start(messages) if train_on is TrainOn.LAST else 0
    out: list[tuple[bool, bool]] = []
    for i, message in enumerate(messages):
        if not is_assistant[i]:
            out.append((False, False))
        elif train_on is TrainOn.FINAL:
            out.append((message.channel == "final", False))
        else:
            trained = i >= last_turn
            # A later message of a generation: the model wrote its <|start|>assistant too.
            out.append((trained, trained and i > last_turn and is_assistant[i - 1]))
    return out


@lru_cache(maxsize=8192)
def _cached_ids(encoding: tiktoken.Encoding, piece: str, trusted: bool) -> tuple[int, ...]:
    return tuple(encode_text(encoding, piece, trusted=trusted))


#: Header pieces this long or shorter repeat across records (roles, channels, recipients):
#: their ids are cached; content is encoded every time.
_CACHED_PIECE = 64


def render_training(
    conversation: Conversation,
    options: RenderOptions | None = None,
    *,
    train_on: TrainOn | str = TrainOn.LAST,
    drop_scope: DropScope | str = DropScope.EARLIER_TURNS,
    encoding: tiktoken.Encoding | None = None,
    **keywords: Unpack[RenderKeywords],
) -> TrainingExample:
    """Render ``conversation`` for fine-tuning, with the mask of what the model samples.

    The ids are :func:`~harmony_grammar.rendering.renderer.render`'s with ``training=True``
    (a last ``final`` answer ends with ``<|return|>``). With ``drop_scope="conversation"``
    they are token-exact with openai-harmony's ``render_conversation_for_training``; the
    default differs from it only where openai-harmony would drop the trained turn's own
    analysis (docs/training.md).

    ``train_on`` is ``"last"`` (the last turn's generations, default), ``"all"`` (every
    generation) or ``"final"`` (``final`` messages only). The render options are
    :func:`render`'s: one :class:`~harmony_grammar.rendering.options.RenderOptions`
    (``options``) and its fields as keywords (``training`` is always True, so ``next_turn``
    must stay unset). ``auto_drop_analysis`` and ``drop_rule`` (default: drop, by
    openai-harmony's rule) apply, by ``drop_scope`` (:class:`DropScope`), to the turns before
    the last one (default) or, as in openai-harmony, to the whole conversation. ``profile``
    renders the ids as that profile does
    (:mod:`harmony_grammar.rendering.profiles`); one that drops by its own rule
    (the HF template, OMP, vLLM 0.34) refuses ``auto_drop_analysis`` and ``drop_rule`` and
    ignores ``drop_scope``.

    Raises :class:`~harmony_grammar.rendering.errors.RenderError` for a conversation the
    renderer cannot render and ValueError for an unknown option value.
    """
    target = TrainOn(train_on)
    opts = RenderOptions.of(options, {**keywords, "training": True})
    trusted_text = opts.trusted_text
    chosen = opts.spec
    messages = _training_messages(conversation, opts, DropScope(drop_scope))
    if encoding is None:
        from ..format.vocabulary import load_encoding

        encoding = load_encoding()
    ids: list[int] = []
    mask: list[int] = []
    spans: list[tuple[int, int]] = []
    texts: list[str] = []
    for message, (trained, head) in zip(messages, _trained(messages, target), strict=True):
        start = len(ids)
        head_end = start
        # System and developer texts repeat across a dataset's records: cache them whole.
        cache_all = message.role in (Role.SYSTEM, Role.DEVELOPER)
        pieces = message_pieces(message)
        author = _cached_ids(encoding, str(pieces[1]), trusted_text)
        if chosen.joined_text:
            pieces = _joined(pieces)
        for index, piece in enumerate(pieces):
            if isinstance(piece, ControlToken):
                ids.append(piece.id)
                texts.append(piece.value)
            elif piece:
                if cache_all or len(piece) <= _CACHED_PIECE:
                    ids += _cached_ids(encoding, piece, trusted_text)
                else:
                    ids += encode_text(encoding, piece, trusted=trusted_text)
                texts.append(piece)
            if index == 1:
                # <|start|> and the author: the prompt's part. Where the author's run goes on
                # (a joined " to=..."), the model's part starts after the author's own ids.
                head_end = len(ids)
                if ids[start + 1 : start + 1 + len(author)] == list(author):
                    head_end = start + 1 + len(author)
        if not trained:
            mask += [0] * (len(ids) - start)
            continue
        masked_from = start if head else head_end
        mask += [0] * (masked_from - start)
        mask += [1] * (len(ids) - masked_from)
        if spans and spans[-1][1] == masked_from:
            spans[-1] = (spans[-1][0], len(ids))
        else:
            spans.append((masked_from, len(ids)))
    return TrainingExample(ids, mask, tuple(spans), "".join(texts))
