"""Recall (memory/recall/): the face, rank, lexical, dates, gather, why, rerank, entities, the
trigram index and the vector stage."""
