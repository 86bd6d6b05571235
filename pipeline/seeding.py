"""Seeds derived from names, so that every room, choice and paraphrase is a pure function of them."""

import hashlib


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from the parts' text: stable across processes, machines and PYTHONHASHSEED."""
    digest = hashlib.sha256("/".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1
