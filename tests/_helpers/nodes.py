"""Nodes as several test modules lay them out: a store written straight (as a bench does), a
chain of origins, and the decayed flag read back."""

from __future__ import annotations

from memory.models import Node


def store(*bodies: str, signatures: tuple[str, ...] = ()) -> list[Node]:
    """Nodes with ids 1, 2, ... (written straight, as a bench does), signed "bench" unless
    `signatures` says otherwise: the store's size, which bounds a rare word's document count,
    is then exactly len(bodies)."""
    assert not Node.objects.exists()
    signatures = signatures or ("bench",) * len(bodies)
    rows = [
        Node(
            pk=i,
            body=body,
            body_hash=f"{i:064x}",
            content_key=f"{i:064x}",
            kind="internet",
            jurisdiction="wild",
            signature=signature,
        )
        for i, (body, signature) in enumerate(zip(bodies, signatures, strict=True), start=1)
    ]
    return Node.objects.bulk_create(rows)


def is_decayed(node: Node) -> bool:
    node.refresh_from_db()
    return node.decayed_at is not None


def chain(make_note, lone, *, days_old: float = 40) -> tuple[Node, Node, Node]:
    """P <- K <- G: K derived from P, G derived from K, all `days_old` by the store clock."""
    p = lone("P: the origin page.", days_old=days_old)
    k = make_note("K: a note on P.", days_old=days_old, origins=[{"id": p.pk}])
    g = make_note("G: a note on K.", days_old=days_old, origins=[{"id": k.pk}])
    return p, k, g


def rooted_vault_section(tmp_path, *, folder: str = "vault", slug: str = "boiler"):
    """A vault file of three parts imported in `folder`, the section of that heading slug rooted
    ("" is the text before the first heading, whose source is the file alone): (node, path)."""
    from memory.importers.markdown import ingest
    from review.ceremony import root

    vault = tmp_path / folder
    vault.mkdir()
    path = vault / "house.md"
    path.write_text("Intro line.\n\n# Boiler\n\nServiced in March.\n\n# Garden\n\nRoses in May.\n")
    ingest(vault)
    source = f"{path}#{slug}" if slug else str(path)
    node = Node.objects.get(source=source, metadata__has_key="heading")
    root(node.pk, adopting_words="True.", expected_body_hash=node.body_hash, owner="owner")
    return node, path
