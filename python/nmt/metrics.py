"""Corpus BLEU, chrF and TER with sacreBLEU's API: corpus_bleu, corpus_chrf and corpus_ter take what
sacreBLEU's functions of those names take (a list of hypotheses and a list of reference streams,
each a list with one reference a hypothesis) and return objects with sacreBLEU's fields; the scores
are libnmt's, computed exactly as sacreBLEU 2.x computes them. An option left out (None) is the
library's default, sacreBLEU's: 13a tokenization, exp smoothing, chrF2 (char_order 6, word_order 0,
beta 2), TER case-insensitive.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Any, List, Optional, Sequence, Union

from . import _lib

Number = Union[int, float]


@dataclass(frozen=True)
class Score:
    """A corpus score: .score, .name ("BLEU", "chrF2", "chrF2++", "TER"), .signature (sacreBLEU's, as
    ``nmt bleu`` prints it); str() formats it as sacreBLEU's str() does ("chrF2 = 61.23")."""

    score: float
    name: str
    signature: str
    verbose: str = field(default="", repr=False)

    def format(self, width: int = 2, score_only: bool = False, signature: str = "") -> str:
        """sacreBLEU's Score.format: "NAME[|SIGNATURE] = SCORE[ VERBOSE]" (the score alone with
        score_only)."""
        if score_only:
            return f"{self.score:.{width}f}"
        text = f"{self.name}|{signature}" if signature else self.name
        text = f"{text} = {self.score:.{width}f}"
        return f"{text} {self.verbose}" if self.verbose else text

    def __str__(self) -> str:
        return self.format()

    def __float__(self) -> float:
        return float(self.score)


@dataclass(frozen=True)
class BLEUScore(Score):
    """A BLEU score with sacreBLEU's BLEUScore fields: counts (matched n-grams of each order, after
    add-k smoothing), totals (hypothesis n-grams), precisions (in percent), bp (brevity penalty),
    ratio (sys_len / ref_len), sys_len and ref_len (words)."""

    counts: List[Number] = field(default_factory=list)
    totals: List[Number] = field(default_factory=list)
    precisions: List[float] = field(default_factory=list)
    bp: float = 0.0
    ratio: float = 0.0
    sys_len: int = 0
    ref_len: int = 0


def _number(x: float) -> Number:
    """A count as sacreBLEU holds it: an int, unless smoothing made it fractional."""
    return int(x) if float(x).is_integer() else x


def _score(metric: str, hypotheses: Sequence[str], references: Sequence[Sequence[str]], **options: Any) -> Score:
    lib = _lib.library()
    hyps, count = _lib.strings(hypotheses, "hypotheses")
    streams = _lib.sequence(references, "references")
    if not streams:
        raise ValueError("references must hold at least one reference stream (a list with one reference a hypothesis)")
    for r, stream in enumerate(streams):
        streams[r] = _lib.sequence(stream, f"references[{r}]")
        if len(streams[r]) != count:
            raise ValueError(f"reference stream {r} has {len(streams[r])} lines but there are {count} hypotheses")
    refs, _ = _lib.strings([line for stream in streams for line in stream], "references")
    o = lib.nmt_corpus_options_default()
    for name, value in options.items():
        if value is not None:
            _lib.set_field(o, name, value)
    out, details = _lib.Metric(), _lib.CorpusDetails()
    if lib.nmt_corpus_score(metric.encode(), count, hyps, len(streams), refs, ctypes.byref(o), ctypes.byref(out),
                            ctypes.byref(details)) < 0:
        raise _lib.fail()
    common = dict(score=out.value, name=out.name.decode(), signature=out.signature.decode(),
                  verbose=details.verbose.decode())
    if metric != "bleu":
        return Score(**common)
    n = details.order
    return BLEUScore(**common, counts=[_number(c) for c in details.counts[:n]],
                     totals=[_number(t) for t in details.totals[:n]], precisions=list(details.precisions[:n]),
                     bp=details.bp, ratio=details.ratio, sys_len=details.sys_len, ref_len=details.ref_len)


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str]], smooth_method: Optional[str] = None,
                smooth_value: Optional[float] = None, force: bool = False, lowercase: bool = False,
                tokenize: Optional[str] = None, use_effective_order: bool = False) -> BLEUScore:
    """Corpus BLEU as sacreBLEU's corpus_bleu: smooth_method "exp" (None), "floor", "add-k" or
    "none"; smooth_value (None: the method's, 0.1 for floor, 1 for add-k); tokenize "13a" (None),
    "none", "intl", "char" or "zh". force is accepted for sacreBLEU's signature: it only silences
    sacreBLEU's warning about tokenized input, which nmt does not give."""
    del force
    score = _score("bleu", hypotheses, references, smooth_method=smooth_method, smooth_value=smooth_value,
                   lowercase=lowercase, tokenize=tokenize, use_effective_order=use_effective_order)
    assert isinstance(score, BLEUScore)
    return score


def corpus_chrf(hypotheses: Sequence[str], references: Sequence[Sequence[str]], char_order: Optional[int] = None,
                word_order: Optional[int] = None, beta: Optional[int] = None, lowercase: bool = False,
                whitespace: bool = False, eps_smoothing: bool = False,
                remove_whitespace: Optional[bool] = None) -> Score:
    """Corpus chrF as sacreBLEU's corpus_chrf and CHRF: char_order (None: 6), word_order (None: 0;
    2 is chrF++), beta (None: 2); whitespace=True keeps whitespace in the character n-grams
    (sacreBLEU's corpus_chrf says remove_whitespace=False, also accepted)."""
    if remove_whitespace is not None:
        whitespace = not remove_whitespace
    return _score("chrf", hypotheses, references, char_order=char_order, word_order=word_order, beta=beta,
                  lowercase=lowercase, whitespace=whitespace, eps_smoothing=eps_smoothing)


def corpus_ter(hypotheses: Sequence[str], references: Sequence[Sequence[str]], normalized: bool = False,
               no_punct: bool = False, asian_support: bool = False, case_sensitive: bool = False) -> Score:
    """Corpus TER as sacreBLEU's corpus_ter (edits per 100 reference words)."""
    return _score("ter", hypotheses, references, normalized=normalized, no_punct=no_punct,
                  asian_support=asian_support, case_sensitive=case_sensitive)
