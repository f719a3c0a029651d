"""``np.random.default_rng(seed)`` for the AEC env's seeded resets, without numpy's Python around
the seed's hash.

``default_rng(seed)`` builds a ``SeedSequence``, whose hash and ``generate_state`` run through numpy
array code (about 10 µs of a reset's 40), then a ``PCG64`` seeded with four words of it. Here the
compiled :func:`~scopa_env.fast.core.seed_words` (built ahead of time, :mod:`scopa_env.fast.aot`)
computes those four words, and the ``PCG64`` takes them from a seed sequence that hands them over
once (:class:`_SeedWords`): the generator is a new one in the same state, so it draws exactly what
``default_rng(seed)``'s does (``tests/test_env_speed_paths.py`` holds them equal). Anything else a
seed sequence offers (``spawn``, ``entropy``, ``generate_state`` again ...) is a real
``SeedSequence(seed)``'s, built the first time it is asked for. Where the extension is missing,
stale or switched off, :func:`generator` is ``default_rng`` itself. Loading this module imports no
numba.
"""

from __future__ import annotations

import numpy as np
from numpy.random.bit_generator import ISpawnableSeedSequence

_SEED_LIMIT = 2**63
"""Seeds :func:`~scopa_env.fast.core.seed_words` takes: ``[0, 2**63)`` (the kit's seed rule)."""
_UNLINKED = object()
_words = _UNLINKED
"""The compiled :func:`~scopa_env.fast.core.seed_words`, None where it is not built, or not looked up yet."""


class _SeedWords(ISpawnableSeedSequence):
    """``SeedSequence(seed)`` to the ``PCG64`` built on it: its first ``generate_state(4, np.uint64)``
    (the one ``PCG64.__init__`` makes) returns the four words already computed; every other call
    and attribute is a real ``SeedSequence(seed)``'s, made on first use."""

    __slots__ = ("_real", "_seed", "_words")

    def __init__(self, seed: int, words: np.ndarray) -> None:
        self._seed = seed
        self._words = words
        self._real: np.random.SeedSequence | None = None

    def _sequence(self) -> np.random.SeedSequence:
        if self._real is None:
            self._real = np.random.SeedSequence(self._seed)
        return self._real

    def generate_state(self, n_words, dtype=np.uint32):
        words = self._words
        if words is not None and n_words == 4 and np.dtype(dtype) == np.uint64:
            self._words = None
            return words
        return self._sequence().generate_state(n_words, dtype)

    def spawn(self, n_children):
        return self._sequence().spawn(n_children)

    def __getattr__(self, name):  # entropy, spawn_key, pool, state ...: the real sequence's
        if name.startswith("__") or name in _SeedWords.__slots__:
            raise AttributeError(name)
        return getattr(self._sequence(), name)

    def __reduce__(self):  # a pickled (or copied) generator carries the real SeedSequence(seed)
        return _itself, (self._sequence(),)

    def __repr__(self) -> str:
        return repr(self._sequence())


def _itself(sequence: np.random.SeedSequence) -> np.random.SeedSequence:
    return sequence


def generator(seed: int) -> np.random.Generator:
    """A new generator that draws as ``np.random.default_rng(seed)``'s, for an int ``seed`` in
    ``[0, 2**63)`` (checked by the caller, :func:`scopa_env.engine.bounds.check_seed`'s rule)."""
    global _words
    compute = _words
    if compute is _UNLINKED:
        from scopa_env.fast import aot

        compute = _words = aot.seed_words()
    if compute is None or type(seed) is not int or not 0 <= seed < _SEED_LIMIT:
        return np.random.default_rng(seed)
    words = np.empty(4, np.uint64)
    compute(seed, words)
    return np.random.Generator(np.random.PCG64(_SeedWords(seed, words)))
