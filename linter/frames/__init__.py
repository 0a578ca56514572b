"""Captured frames: the corpus format and its one reader, decoding a frame under a spec revision, and
the generator of synthetic corpora (``krpc-lint frames generate``). Shared by ``replay`` and ``size --frames``."""
