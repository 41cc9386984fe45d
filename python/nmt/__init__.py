"""nmt from Python: translation with a model directory, forced-decoding scores, and BLEU, chrF and
TER computed exactly as sacreBLEU computes them.

Bindings over libnmt's C API (include/nmt/nmt.h) with ctypes, the standard library only. The
library is ``$NMT_LIBRARY`` when set (a path to libnmt.so), else ``libnmt.so.0`` from the system's
library path (``cmake --install build`` puts it in ``PREFIX/lib``; add that to LD_LIBRARY_PATH or
ldconfig's list when the prefix is not a standard one).

    >>> import nmt
    >>> t = nmt.Translator("runs/quickstart", beam_size=5, threads=4)
    >>> t.translate(["the cat sees a dog"])
    ['...']
    >>> t3 = nmt.Translator("runs/quickstart", n_best=3)
    >>> t3.translate(["the cat sees a dog"], n_best=3, scores=True)  # best first
    [[('...', -0.21), ('...', -0.93), ('...', -1.4)]]
    >>> t.score(["the cat sees a dog"], ["..."])                      # log-probabilities
    [-0.35]
    >>> nmt.bleu(["The dog bit the man."], [["The dog bit the man."]]).score
    100.0

``bleu``, ``chrf`` and ``ter`` take what sacreBLEU's ``corpus_bleu`` takes: a list of hypotheses
and a list of reference streams (each a list of references, one per hypothesis), and return an
object with ``.score``, ``.name`` and ``.signature`` (sacreBLEU 2.x defaults: 13a, exp, chrF2).
"""

import ctypes
import os
import threading

__all__ = ["Translator", "NmtError", "Score", "bleu", "chrf", "ter", "library", "version"]


class NmtError(RuntimeError):
    """An error reported by libnmt; the message names the file, line or option that is wrong."""


class _EngineOptions(ctypes.Structure):
    _fields_ = [
        ("beam_size", ctypes.c_int),
        ("n_best", ctypes.c_int),
        ("greedy", ctypes.c_int),
        ("length_penalty", ctypes.c_double),
        ("max_length_ratio", ctypes.c_double),
        ("threads", ctypes.c_int),
        ("precision", ctypes.c_char_p),
        ("max_batch", ctypes.c_int),
        ("max_input_length", ctypes.c_int),
        ("crop", ctypes.c_int),
        ("alignment", ctypes.c_int),
        ("sampling", ctypes.c_int),
        ("sampling_topk", ctypes.c_int),
        ("sampling_topp", ctypes.c_double),
        ("temperature", ctypes.c_double),
        ("seed", ctypes.c_ulonglong),
        ("batch_tokens", ctypes.c_int),
        ("shortlist", ctypes.c_int),
        ("repetition_penalty", ctypes.c_double),
        ("no_repeat_ngram_size", ctypes.c_int),
        ("loop_guard", ctypes.c_int),
        ("confidence", ctypes.c_int),
    ]


class _Metric(ctypes.Structure):
    _fields_ = [("value", ctypes.c_double), ("name", ctypes.c_char * 32), ("signature", ctypes.c_char * 256)]


_lib = None


def library():
    """The loaded libnmt (ctypes.CDLL), loaded on first use."""
    global _lib
    if _lib is not None:
        return _lib
    path = os.environ.get("NMT_LIBRARY") or "libnmt.so.0"
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise NmtError(
            f"cannot load libnmt ({path}): {e}; set NMT_LIBRARY to the path of libnmt.so, or put the "
            "directory `cmake --install` wrote it to on the library path"
        ) from None
    c_int, c_double, c_char_p, c_void_p = ctypes.c_int, ctypes.c_double, ctypes.c_char_p, ctypes.c_void_p
    strings = ctypes.POINTER(c_char_p)
    signatures = {
        "nmt_version": (c_char_p, []),
        "nmt_last_error": (c_char_p, []),
        "nmt_engine_options_default": (_EngineOptions, []),
        "nmt_engine_open": (c_int, [ctypes.POINTER(c_void_p), c_char_p, ctypes.POINTER(_EngineOptions)]),
        "nmt_engine_close": (None, [c_void_p]),
        "nmt_engine_translate_from": (c_int, [c_void_p, ctypes.c_ulonglong, c_int, strings, ctypes.POINTER(c_void_p)]),
        "nmt_engine_logprob": (c_int, [c_void_p, c_int, strings, strings, ctypes.POINTER(c_double)]),
        "nmt_result_free": (None, [c_void_p]),
        "nmt_result_hypotheses": (c_int, [c_void_p, c_int]),
        "nmt_result_hypothesis": (c_char_p, [c_void_p, c_int, c_int]),
        "nmt_result_score": (c_double, [c_void_p, c_int, c_int]),
        "nmt_result_confidence": (c_int, [c_void_p, c_int, c_int, ctypes.POINTER(c_double), ctypes.POINTER(c_double)]),
        "nmt_corpus_bleu": (c_int, [c_int, strings, c_int, strings, ctypes.POINTER(_Metric)]),
        "nmt_corpus_chrf": (c_int, [c_int, strings, c_int, strings, ctypes.POINTER(_Metric)]),
        "nmt_corpus_ter": (c_int, [c_int, strings, c_int, strings, ctypes.POINTER(_Metric)]),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    _lib = lib
    return lib


def version():
    """libnmt's version, e.g. '0.1.0'."""
    return library().nmt_version().decode()


def _fail():
    return NmtError(library().nmt_last_error().decode("utf-8", "replace"))


def _strings(items, what):
    if isinstance(items, (str, bytes)):
        raise TypeError(f"{what} is a {type(items).__name__}: give a list of sentences, e.g. [{what[:-1]}]")
    items = list(items)
    for i, s in enumerate(items):
        if not isinstance(s, str):
            raise TypeError(f"{what}[{i}] is {type(s).__name__}, not str")
        if "\n" in s:
            raise ValueError(f"{what}[{i}] holds a newline: give one sentence per item")
        if "\0" in s:
            raise ValueError(f"{what}[{i}] holds a NUL character at {s.index(chr(0))}: the text after it would be lost")
    array = (ctypes.c_char_p * max(len(items), 1))()
    for i, s in enumerate(items):
        array[i] = s.encode("utf-8")
    return array, len(items)


def _check_range(name, value, ctype):
    """Refuses an integer that the C field would wrap (beam_size=2**32 + 1 is not 1)."""
    if ctype in (ctypes.c_double, ctypes.c_float, ctypes.c_char_p) or not issubclass(ctype, ctypes._SimpleCData):
        return
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    bits = 8 * ctypes.sizeof(ctype)
    signed = ctype(-1).value == -1
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if not low <= value <= high:
        raise ValueError(f"{name}={value} is out of range ({low} to {high})")


class Translator:
    """A model directory (what `nmt train` or `nmt average` writes), opened once.

    The options are those of `nmt translate`, with its defaults (read from the library): beam_size,
    n_best (the most hypotheses translate may return per line), greedy, length_penalty,
    max_length_ratio, threads (0: the CPUs this process may use), precision ("fp32", "bf16", "int8" or
    "auto"), max_batch, batch_tokens, max_input_length (source pieces a line, 1000) and crop (a longer
    line is cropped instead of refused with NmtError) and shortlist (MODEL_DIR/shortlist.bin); the
    decoding controls repetition_penalty, no_repeat_ngram_size and loop_guard (those of `nmt
    translate`'s --repetition-penalty, --no-repeat-ngram-size, --loop-guard), and confidence=True
    for translate(..., confidence=True)'s alternatives.
    sampling=True draws each piece from the model's distribution instead of searching, as `nmt
    translate --sampling` does, with sampling_topk, sampling_topp, temperature and seed (its
    --sampling-topk, --sampling-topp, --temperature, --seed). model_dir may also be a model file or a
    checkpoint (DIR/checkpoints/step-N.safetensors). close() from another thread waits for the calls
    in flight; later calls raise NmtError.
    """

    def __init__(self, model_dir, **options):
        # Every option left out keeps the library's default (nmt_engine_options_default, those of
        # `nmt translate`). n_best changes when the search may stop, so it is the translator's: 1 gives
        # `nmt translate`'s translations, N those of `nmt translate --n-best N`.
        self._calls = threading.Condition()  # guards _engine and _inside: close waits for the calls in flight
        self._inside = 0
        self._engine = None
        lib = library()
        o = lib.nmt_engine_options_default()
        names = {name for name, _ in _EngineOptions._fields_}
        for name, value in options.items():
            if name not in names:
                raise TypeError(f"Translator() got an unexpected option '{name}'")
            if name == "precision":
                self._precision = value.encode()
                value = self._precision
            elif name in ("greedy", "crop", "sampling", "shortlist", "confidence"):
                value = int(bool(value))
            else:
                _check_range(name, value, dict(_EngineOptions._fields_)[name])
            setattr(o, name, value)
        if options.get("greedy"):
            o.beam_size = 1
        engine = ctypes.c_void_p()
        if lib.nmt_engine_open(ctypes.byref(engine), os.fsencode(model_dir), ctypes.byref(o)) < 0:
            raise _fail()
        self._engine = engine
        self.n_best_max = o.n_best

    def close(self):
        """Frees the model (also done when the object is collected), once the calls in flight on
        other threads have returned."""
        calls = getattr(self, "_calls", None)
        if calls is None:
            return
        with calls:
            engine, self._engine = self._engine, None
            while self._inside:
                calls.wait()
        if engine:
            library().nmt_engine_close(engine)

    def _enter(self):
        with self._calls:
            if self._engine is None:
                raise NmtError("the translator is closed")
            self._inside += 1
            return self._engine

    def _leave(self):
        with self._calls:
            self._inside -= 1
            self._calls.notify_all()

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def translate(self, lines, n_best=1, scores=False, first_line=0, confidence=False):
        """Translates a list of sentences. Returns a list of str; with scores=True, a list of
        (translation, score) pairs; with confidence=True, of (translation, score, mean_logprob,
        alternatives) tuples (alternatives is 0 unless the translator was opened with confidence=True);
        with n_best=N > 1, a list of lists of up to N such hypotheses, best first. The score is the
        rank: log-probability / length penalty; mean_logprob the log-probability per decided token.
        With sampling, lines[i] is drawn as line first_line + i (from 0) of a file `nmt translate
        --sampling` reads: give each part of a long text its first line number."""
        if not 1 <= n_best <= self.n_best_max:
            raise ValueError(f"n_best must be from 1 to {self.n_best_max} (the translator's n_best)")
        _check_range("first_line", first_line, ctypes.c_ulonglong)
        lib = library()
        array, count = _strings(lines, "lines")
        result = ctypes.c_void_p()
        engine = self._enter()
        try:
            if lib.nmt_engine_translate_from(engine, first_line, count, array, ctypes.byref(result)) < 0:
                raise _fail()
        finally:
            self._leave()
        try:
            out = []
            for i in range(count):
                hyps = []
                for k in range(min(n_best, lib.nmt_result_hypotheses(result, i))):
                    text = lib.nmt_result_hypothesis(result, i, k).decode("utf-8")
                    if confidence:
                        mean, alternatives = ctypes.c_double(), ctypes.c_double()
                        lib.nmt_result_confidence(result, i, k, ctypes.byref(mean), ctypes.byref(alternatives))
                        hyps.append((text, lib.nmt_result_score(result, i, k), mean.value, alternatives.value))
                    else:
                        hyps.append((text, lib.nmt_result_score(result, i, k)) if scores else text)
                out.append(hyps if n_best > 1 else hyps[0])
            return out
        finally:
            lib.nmt_result_free(result)

    def score(self, sources, targets):
        """The natural-log probability of each target given its source (forced decoding), as
        `nmt score` writes it: a list of float."""
        src, count = _strings(sources, "sources")
        tgt, tgt_count = _strings(targets, "targets")
        if count != tgt_count:
            raise ValueError(f"{count} sources but {tgt_count} targets")
        out = (ctypes.c_double * max(count, 1))()
        engine = self._enter()
        try:
            if library().nmt_engine_logprob(engine, count, src, tgt, out) < 0:
                raise _fail()
        finally:
            self._leave()
        return list(out[:count])


class Score:
    """A corpus score, like sacreBLEU's result objects: .score, .name ("BLEU", "chrF2", "TER") and
    .signature (sacreBLEU's)."""

    def __init__(self, score, name, signature):
        self.score, self.name, self.signature = score, name, signature

    def __str__(self):
        return f"{self.name} = {self.score:.2f}"

    def __repr__(self):
        return f"Score({self.score!r}, {self.name!r}, {self.signature!r})"

    def __float__(self):
        return float(self.score)


def _corpus(function, hypotheses, references):
    hyps, count = _strings(hypotheses, "hypotheses")
    if isinstance(references, (str, bytes)) or not references:
        raise TypeError("references must be a list of reference streams, each a list of str (as sacreBLEU's)")
    streams = [list(stream) for stream in references]
    for r, stream in enumerate(streams):
        if len(stream) != count:
            raise ValueError(f"reference stream {r} has {len(stream)} lines but there are {count} hypotheses")
    refs, _ = _strings([line for stream in streams for line in stream], "references")
    out = _Metric()
    if function(count, hyps, len(streams), refs, ctypes.byref(out)) < 0:
        raise _fail()
    return Score(out.value, out.name.decode(), out.signature.decode())


def bleu(hypotheses, references):
    """Corpus BLEU, as sacreBLEU's corpus_bleu(hypotheses, references) with its defaults."""
    return _corpus(library().nmt_corpus_bleu, hypotheses, references)


def chrf(hypotheses, references):
    """Corpus chrF2, as sacreBLEU's corpus_chrf."""
    return _corpus(library().nmt_corpus_chrf, hypotheses, references)


def ter(hypotheses, references):
    """Corpus TER, as sacreBLEU's corpus_ter."""
    return _corpus(library().nmt_corpus_ter, hypotheses, references)
