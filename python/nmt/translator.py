"""Translation with a model directory: ``Translator`` and its result type ``Translation``.

A ``Translator`` opens a model directory once (libnmt's engine). ``translate_batch`` translates a list
of sentences into a list (one entry a sentence) of n-best lists of ``Translation``, as CTranslate2's
``translate_batch`` returns them; ``translate`` translates one sentence into its best ``Translation``
(or, with ``n_best`` > 1, its list). Every decoding option can be given per call; an option left out
(None) is the translator's, whose own defaults are the library's (``nmt translate``'s). Target
prefixes, constraint phrases and glossaries guide the search per sentence; ``translate_iter`` and
``stream`` yield the translation as the search decides it.
"""

from __future__ import annotations

import ctypes
import os
import queue
import threading
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from . import _lib
from ._lib import NmtError

# The options of the engine that a call may change (nmt.h: nmt_translate_options.options).
CALL_OPTIONS = (
    "beam_size", "n_best", "greedy", "length_penalty", "max_length_ratio", "max_input_length", "crop",
    "sampling", "sampling_topk", "sampling_topp", "temperature", "seed", "batch_tokens", "repetition_penalty",
    "no_repeat_ngram_size", "loop_guard", "confidence",
)


@dataclass(frozen=True)
class Translation:
    """One hypothesis of a sentence's translation.

    text: the translation. score: its rank, the log-probability divided by the length penalty.
    logprob: its natural-log probability (pieces and end of sentence, pieces alone for a translation
    cut at the maximum length; a target prefix's pieces count nothing). confidence: the log-probability per decided token. alternatives: exp of the mean
    entropy of the distributions its tokens were chosen from (the number of equally likely choices
    at a typical step), with ``return_alternatives=True`` only, else None. alignment: (source piece,
    target piece) pairs, one a target piece, with ``return_alignment=True`` only, else None. pieces:
    the target pieces (SentencePiece's, e.g. "▁Haus").
    """

    text: str
    score: float
    logprob: float
    confidence: float
    pieces: List[str]
    alternatives: Optional[float] = None
    alignment: Optional[List[Tuple[int, int]]] = None

    def __str__(self) -> str:
        return self.text


TranslationList = List[Translation]


class Translator:
    """A model directory (what ``nmt train`` or ``nmt average`` writes), opened once.

    model_dir may also be a model file in one or a checkpoint (DIR/checkpoints/step-N.safetensors).
    The options are those of ``nmt translate`` with its defaults (read from the library, never
    written here): beam_size, n_best, greedy, length_penalty, max_length_ratio, threads (0: the CPUs
    this process may use), precision ("fp32", "bf16", "int8" or "auto"; None: the model's own),
    max_batch, batch_tokens, max_input_length (source pieces a line) and crop (a longer line is cropped
    instead of refused), shortlist (MODEL_DIR/shortlist.bin); the decoding controls
    repetition_penalty, no_repeat_ngram_size and loop_guard; confidence (each hypothesis's
    alternatives); sampling with sampling_topk, sampling_topp, temperature and seed. Each call may
    change those of CALL_OPTIONS; threads, precision, max_batch and shortlist are the translator's.

    Calls may come from several threads (they take turns on the engine). close(), also from another
    thread, waits for the calls in flight; later calls raise NmtError.
    """

    def __init__(self, model_dir: Union[str, os.PathLike], **options: Any) -> None:
        self._calls = threading.Condition()  # guards _engine and _inside: close waits for the calls in flight
        self._inside = 0
        self._engine: Optional[ctypes.c_void_p] = None
        lib = _lib.library()
        o = lib.nmt_engine_options_default()
        for name, value in options.items():
            if name not in dict(_lib.EngineOptions._fields_):
                raise TypeError(f"Translator() got an unexpected option '{name}'")
            _lib.set_field(o, name, value)
        if options.get("greedy"):
            o.beam_size = 1
        engine = ctypes.c_void_p()
        if lib.nmt_engine_open(ctypes.byref(engine), os.fsencode(model_dir), ctypes.byref(o)) < 0:
            raise _lib.fail()
        self._engine = engine

    @property
    def options(self) -> Dict[str, Any]:
        """The options in effect (threads and precision resolved), as a dict."""
        o = _lib.library().nmt_engine_get_options(self._use()).contents
        out = {name: getattr(o, name) for name, _ in _lib.EngineOptions._fields_}
        out["precision"] = out["precision"].decode() if out["precision"] else None
        return out

    @property
    def source_language(self) -> Optional[str]:
        """The model's source language code ("en"), from its training config; None when not recorded."""
        code = _lib.library().nmt_engine_source_language(self._use())
        return code.decode() if code else None

    @property
    def target_language(self) -> Optional[str]:
        """The model's target language code; None when not recorded."""
        code = _lib.library().nmt_engine_target_language(self._use())
        return code.decode() if code else None

    def close(self) -> None:
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
            _lib.library().nmt_engine_close(engine)

    def _use(self) -> ctypes.c_void_p:
        if self._engine is None:
            raise NmtError("the translator is closed")
        return self._engine

    def _enter(self) -> ctypes.c_void_p:
        with self._calls:
            engine = self._use()
            self._inside += 1
            return engine

    def _leave(self) -> None:
        with self._calls:
            self._inside -= 1
            self._calls.notify_all()

    def __del__(self) -> None:
        self.close()

    def __enter__(self) -> "Translator":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def translate_batch(
        self,
        source: Sequence[str],
        *,
        target_prefix: Optional[Sequence[Optional[str]]] = None,
        constraints: Optional[Sequence[Optional[Sequence[str]]]] = None,
        glossary: Optional[Sequence[Tuple[str, str]]] = None,
        glossary_case: bool = False,
        return_alignment: bool = False,
        return_alternatives: bool = False,
        first_line: int = 0,
        **options: Any,
    ) -> List[TranslationList]:
        """Translates a list of sentences: a list, one entry a sentence, of its hypotheses (n_best
        of them, or fewer where the search found fewer distinct ones), best first.

        target_prefix: one entry a sentence (None: none): every hypothesis starts with it.
        constraints: one entry a sentence, a list of phrases (None: none): every hypothesis holds
        each whole. glossary: (source term, target term) pairs: the target term of each entry whose
        source term occurs in a sentence (between word boundaries; any case unless glossary_case)
        is one more constraint of it. return_alignment: Translation.alignment; return_alternatives:
        Translation.alternatives. first_line: the line number of source[0] (sampling draws are keyed
        by line number, so that a text translated in parts is drawn as the whole). options: those of
        CALL_OPTIONS (None or left out: the translator's). An empty sentence translates to "".
        """
        return self._run(source, None, target_prefix=target_prefix, constraints=constraints, glossary=glossary,
                         glossary_case=glossary_case, return_alignment=return_alignment,
                         return_alternatives=return_alternatives, first_line=first_line, **options)

    def translate(self, text: str, **kwargs: Any) -> Union[Translation, TranslationList]:
        """Translates one sentence: its best Translation, or with n_best > 1 the list of its
        hypotheses, best first. target_prefix is a str and constraints a list of phrases for this
        sentence; the other arguments are translate_batch's."""
        _lib.text(text, "text")
        self._one_sentence(kwargs)
        hyps = self.translate_batch([text], **kwargs)[0]
        n_best = kwargs.get("n_best")
        return hyps if (n_best if n_best is not None else self.options["n_best"]) > 1 else hyps[0]

    @staticmethod
    def _one_sentence(kwargs: Dict[str, Any]) -> None:
        """translate_batch's per-sentence arguments from one sentence's (checked for their types)."""
        prefix = kwargs.get("target_prefix")
        if prefix is not None:
            _lib.text(prefix, "target_prefix")
            kwargs["target_prefix"] = [prefix]
        phrases = kwargs.get("constraints")
        if phrases is not None:
            kwargs["constraints"] = [_lib.sequence(phrases, "constraints")]

    def score(self, sources: Sequence[str], targets: Sequence[str]) -> List[float]:
        """The natural-log probability of each target given its source (forced decoding), as
        ``nmt score`` writes it."""
        src, count = _lib.strings(sources, "sources")
        tgt, tgt_count = _lib.strings(targets, "targets")
        if count != tgt_count:
            raise ValueError(f"{count} sources but {tgt_count} targets")
        out = (ctypes.c_double * max(count, 1))()
        engine = self._enter()
        try:
            if _lib.library().nmt_engine_logprob(engine, count, src, tgt, out) < 0:
                raise _lib.fail()
        finally:
            self._leave()
        return list(out[:count])

    def translate_iter(self, text: str, **kwargs: Any) -> Iterator[str]:
        """Yields the best translation of one sentence in parts as the search decides them (greedy:
        each piece; beam: what every candidate for the best shares); joined they are
        translate(text).text. The arguments are translate's (n_best is 1)."""
        _lib.text(text, "text")
        self._one_sentence(kwargs)
        for _, part, _ in self.stream([text], **kwargs):
            if part:
                yield part

    def stream(self, source: Sequence[str], **kwargs: Any) -> Iterator[Tuple[int, str, bool]]:
        """Yields (sentence index, text, final) as the search decides each sentence's best
        translation: a sentence's texts joined are its translation, and its last has final True.
        Sentences decoded in one batch interleave. The arguments are translate_batch's; the call runs
        on a thread of its own while the generator is consumed, and its errors are raised here."""
        parts: "queue.Queue[Any]" = queue.Queue()
        done = object()

        def receive(_user: Any, line: int, part: bytes, final: int) -> None:
            parts.put((line, part.decode("utf-8"), bool(final)))

        callback = _lib.StreamCallback(receive)
        failure: List[BaseException] = []

        def run() -> None:
            try:
                self._run(source, callback, **kwargs)
            except BaseException as e:  # raised in the consumer's thread below
                failure.append(e)
            finally:
                parts.put(done)

        worker = threading.Thread(target=run, name="nmt-stream", daemon=True)
        worker.start()
        try:
            while True:
                item = parts.get()
                if item is done:
                    break
                yield item
        finally:
            worker.join()
        if failure:
            raise failure[0]

    def _call_options(self, engine: ctypes.c_void_p, options: Dict[str, Any], alignment: bool,
                      alternatives: bool) -> Optional[_lib.EngineOptions]:
        """The call's options (the translator's with the given ones), or None when they are the
        translator's."""
        given = {name: value for name, value in options.items() if value is not None}
        for name in given:
            if name not in CALL_OPTIONS:
                raise TypeError(f"unexpected option '{name}' (a call takes {', '.join(CALL_OPTIONS)})")
        base = _lib.library().nmt_engine_get_options(engine).contents
        if not given and bool(base.alignment) == alignment and (base.confidence or not alternatives):
            return None
        o = _lib.EngineOptions.from_buffer_copy(base)
        if "beam_size" in given and "greedy" not in given:
            o.greedy = 0
        for name, value in given.items():
            _lib.set_field(o, name, value)
        o.alignment = int(alignment)
        o.confidence = int(alternatives or base.confidence)
        return o

    def _run(self, source: Sequence[str], stream: Any, *, target_prefix: Any = None, constraints: Any = None,
             glossary: Any = None, glossary_case: bool = False, return_alignment: bool = False,
             return_alternatives: bool = False, first_line: int = 0, **options: Any) -> List[TranslationList]:
        """translate_batch with stream (a StreamCallback, or None) passed to the call."""
        lib = _lib.library()
        lines, count = _lib.strings(source, "source")
        call = lib.nmt_translate_options_default()
        call.first_line = _lib.check_int("first_line", first_line, ctypes.c_ulonglong)
        keep: List[Any] = []  # the arrays the call points into
        prefixes = _lib.optional_strings(target_prefix, count, "target_prefix")
        if prefixes is not None:
            call.target_prefix = prefixes
        if constraints is not None:
            rows = _lib.sequence(constraints, "constraints")
            if len(rows) != count:
                raise ValueError(f"constraints has {len(rows)} entries for {count} lines")
            table = (ctypes.POINTER(ctypes.c_char_p) * max(count, 1))()
            for i, phrases in enumerate(rows):
                if phrases is None:
                    continue
                phrases = _lib.sequence(phrases, f"constraints[{i}]")
                row = (ctypes.c_char_p * (len(phrases) + 1))(
                    *[_lib.text(p, f"constraints[{i}][{k}]") for k, p in enumerate(phrases)], None)
                keep.append(row)
                table[i] = ctypes.cast(row, ctypes.POINTER(ctypes.c_char_p))
            keep.append(table)
            call.constraints = table
        if glossary is not None:
            entries = _lib.sequence(glossary, "glossary")
            terms = (ctypes.c_char_p * max(2 * len(entries), 1))()
            for i, entry in enumerate(entries):
                if isinstance(entry, (str, bytes)) or len(entry) != 2:
                    raise TypeError(f"glossary[{i}] must be a (source term, target term) pair")
                terms[2 * i] = _lib.text(entry[0], f"glossary[{i}][0]")
                terms[2 * i + 1] = _lib.text(entry[1], f"glossary[{i}][1]")
            call.glossary = terms
            call.glossary_size = _lib.check_int("len(glossary)", len(entries), ctypes.c_int)
            call.glossary_case = int(bool(glossary_case))
        if stream is not None:
            call.stream = stream
        result = ctypes.c_void_p()
        engine = self._enter()
        try:
            own = self._call_options(engine, options, return_alignment, return_alternatives)
            if own is not None:
                call.options = ctypes.pointer(own)
            if lib.nmt_engine_translate_with(engine, count, lines, ctypes.byref(call), ctypes.byref(result)) < 0:
                raise _lib.fail()
        finally:
            self._leave()
        try:
            return [self._hypotheses(result, i, return_alignment, return_alternatives) for i in range(count)]
        finally:
            lib.nmt_result_free(result)

    @staticmethod
    def _hypotheses(result: ctypes.c_void_p, i: int, alignment: bool, alternatives: bool) -> TranslationList:
        lib = _lib.library()
        out = []
        for k in range(lib.nmt_result_hypotheses(result, i)):
            mean, alt = ctypes.c_double(), ctypes.c_double()
            lib.nmt_result_confidence(result, i, k, ctypes.byref(mean), ctypes.byref(alt))
            n = ctypes.c_int()
            pieces = lib.nmt_result_target_pieces(result, i, k, ctypes.byref(n))
            pairs = None
            if alignment:
                array = ctypes.POINTER(ctypes.c_int)()
                m = lib.nmt_result_alignment(result, i, k, ctypes.byref(array))
                pairs = [(array[2 * j], array[2 * j + 1]) for j in range(m)]
            out.append(Translation(
                text=lib.nmt_result_hypothesis(result, i, k).decode("utf-8"),
                score=lib.nmt_result_score(result, i, k),
                logprob=lib.nmt_result_logprob(result, i, k),
                confidence=mean.value,
                pieces=[pieces[j].decode("utf-8") for j in range(n.value)],
                alternatives=alt.value if alternatives else None,
                alignment=pairs,
            ))
        return out
