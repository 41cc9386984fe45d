"""nmt from Python: translation with a model directory, forced-decoding scores, and BLEU, chrF and
TER computed exactly as sacreBLEU computes them.

Bindings over libnmt's C API (include/nmt/nmt.h) with ctypes, the standard library only; where the
library is looked for: nmt._lib. The modules: translator (Translator, Translation), metrics
(corpus_bleu, corpus_chrf, corpus_ter and their results), _lib (ctypes).

    >>> import nmt
    >>> t = nmt.Translator("runs/quickstart", beam_size=5, threads=4)
    >>> t.translate("the cat sees a dog").text
    '...'
    >>> [[h.text for h in hyps] for hyps in t.translate_batch(["the cat", "a dog"], n_best=2)]
    [['...', '...'], ['...', '...']]
    >>> t.translate("the cat sees a dog", target_prefix="die", constraints=["Hund"]).text
    'die ... Hund ...'
    >>> "".join(t.translate_iter("the cat sees a dog"))   # as the search decides it
    '...'
    >>> nmt.corpus_bleu(["The dog bit the man."], [["The dog bit the man."]]).score
    100.0
"""

from ._lib import NmtError, library
from .metrics import BLEUScore, Score, corpus_bleu, corpus_chrf, corpus_ter
from .translator import Translation, Translator

__all__ = [
    "BLEUScore",
    "NmtError",
    "Score",
    "Translation",
    "Translator",
    "corpus_bleu",
    "corpus_chrf",
    "corpus_ter",
    "library",
    "version",
]

__version__ = "0.1.0"


def version() -> str:
    """libnmt's version, e.g. '0.1.0' (that of the library loaded, which may differ from
    __version__, this package's)."""
    return library().nmt_version().decode()
