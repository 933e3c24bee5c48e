"""The ``stop`` filter keeps each piece of text with the entries that wrote it (issue 40,
item 8): what it sends is the text before the first stop string, and each piece sent carries
exactly the entries of the whole pieces it holds; the piece a stop string begins inside is
sent up to the stop without its entries, and nothing after the stop is sent."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from harmony_grammar.gateway.stop_strings import StopFilter

_TEXT = st.text(alphabet="abc\u00e9 ", min_size=0, max_size=4)


@given(
    pieces=st.lists(_TEXT, max_size=12),
    stops=st.lists(st.text(alphabet="abc", min_size=1, max_size=3), min_size=1, max_size=4),
)
def test_what_is_sent_is_the_text_before_the_stop_with_its_pieces_entries(
    pieces: list[str], stops: list[str]
) -> None:
    whole = "".join(pieces)
    hits = [i for i in (whole.find(s) for s in stops) if i >= 0]
    returned = whole[: min(hits)] if hits else whole
    stop = StopFilter(stops)
    sent: list[tuple[str, list[int]]] = []
    for index, piece in enumerate(pieces):
        sent.append(stop.feed(piece, [index]))
    if not stop.stopped:
        sent.append(stop.flush())
    assert "".join(text for text, _ in sent) == returned
    assert stop.stopped is bool(hits)
    entries = [e for _, chunk in sent for e in chunk]
    # The entries are those of the whole pieces inside the returned text, in order, none
    # fed after the stop was seen (the piece that completed it may still end before it).
    seen = next(
        (k for k in range(len(pieces)) if any(s in "".join(pieces[: k + 1]) for s in stops)),
        len(pieces),
    )
    ends = [len("".join(pieces[: i + 1])) for i in range(len(pieces))]
    assert entries == [i for i in range(len(pieces)) if ends[i] <= len(returned) and i <= seen]
    for text, chunk in sent:  # each send: its entries' pieces spell a prefix of its text
        assert text.startswith("".join(pieces[i] for i in chunk))
