"""memory.chunks: id lists cut to fit one IN list."""

from memory.chunks import IN_LIST, chunks


def test_pieces_cover_the_list_in_order_and_none_is_longer_than_an_in_list():
    ids = list(range(2 * IN_LIST + 1))
    pieces = list(chunks(ids))
    assert [len(p) for p in pieces] == [IN_LIST, IN_LIST, 1]
    assert [i for p in pieces for i in p] == ids


def test_an_empty_list_gives_no_piece():
    assert list(chunks([])) == []
