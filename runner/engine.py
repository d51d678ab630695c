"""The llama.cpp engine: the only module that touches ``llama_cpp``.

Why not llama-cpp-python's high-level ``Llama``: it spends about 3 ms of Python per token, a third
of the speed on a GPU doing 100 tokens/s. This engine drives the low-level API directly and keeps
the per-token path to a handful of ctypes calls: one ``llama_decode`` per step, llama.cpp's own C
sampler chain, and a cached token-to-text table. Everything else (templates, tokenizing, request
parsing) happens once per request, outside the loop.

One scheduler thread owns the context. Requests wait in a FIFO queue and are admitted into
``parallel`` slots (llama.cpp sequences); every step decodes one batch that carries one token for
each generating slot and prompt chunks for slots still reading their prompt, as llama-server does.
Each slot keeps the tokens its KV cache holds, so a chat that re-sends its history only decodes
the new suffix.
"""

from __future__ import annotations

import codecs
import ctypes
import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import llama_cpp

from runner import llamalog, runtime
from runner.holdback import overlap
from runner.llamalog import last_error
from runner.params import ParamsError, context_params, model_params
from runner.settings import FLASH_ATTN, LoadSettings
from runner.speculative import NgramIndex, SpecCounts, Speculation
from runner.threads import OtherLoad, ThreadTuner

log = logging.getLogger(__name__)


# llama-server's SPEC_VOCAB_MAX_SIZE_DIFFERENCE: a draft's vocabulary may be this much larger or
# smaller than the model's (padding), the ids they share being the same tokens.
VOCAB_SIZE_SLACK = 128


class EngineError(Exception):
    """A failure a client or the user can act on; ``str()`` is the message."""


class LoadError(EngineError):
    """The model could not be loaded. ``out_of_memory`` picks the runner's exit code."""

    def __init__(self, message: str, out_of_memory: bool = False) -> None:
        super().__init__(message)
        self.out_of_memory = out_of_memory


class GrammarError(EngineError):
    """llama.cpp could not parse a grammar; ``str()`` says why in a line (never the grammar)."""


class ContextLengthExceeded(EngineError):
    def __init__(self, n_prompt: int, n_ctx: int, at_least: bool = False) -> None:
        super().__init__(
            f"The prompt is {'at least ' if at_least else ''}{n_prompt} tokens long, but this "
            f"model was loaded with a context of {n_ctx} tokens. Shorten the conversation or "
            "load the model with a larger context."
        )
        self.n_prompt = n_prompt
        self.n_ctx = n_ctx
        self.at_least = at_least


@dataclass
class Sampling:
    """Sampling parameters; defaults are llama-server's."""

    temperature: float = 0.8
    top_k: int = 40
    top_p: float = 0.95
    min_p: float = 0.05
    repeat_penalty: float = 1.0
    repeat_last_n: int = 64
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    seed: int = -1
    logit_bias: dict[int, float] = field(default_factory=dict)
    grammar: str | None = None


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0


# Events a job emits, called on the scheduler thread: keep the receivers cheap.
TextSink = Callable[[str], None]
# (token, its log-probability, the n most likely tokens with theirs); only when asked for.
LogprobSink = Callable[[int, float, list[tuple[int, float]]], None]
DoneSink = Callable[[str, Usage], None]  # finish_reason: "stop" | "length" | "cancelled"
ErrorSink = Callable[[EngineError], None]


@dataclass(eq=False)
class Job:
    prompt: list[int]
    on_text: TextSink
    on_done: DoneSink
    on_error: ErrorSink
    max_tokens: int | None = None
    sampling: Sampling = field(default_factory=Sampling)
    stop: tuple[str, ...] = ()
    ignore_eos: bool = False
    cache_prompt: bool = True  # False: decode the whole prompt again (benchmarks, debugging)
    warm_next_turn: bool = False  # a chat reply: decode the template's turn boundary after it
    speculate: bool = True  # False: one token at a time even where the runner drafts (a trial)
    logprobs: int | None = None  # None: off (the fast path); n: also the n likeliest tokens
    on_logprob: LogprobSink | None = None
    # A sampler chain made by make_sampler off the scheduler thread (a grammar's parse can take
    # a while); the slot owns it once started. None: the scheduler makes one (cheap, no grammar).
    sampler: Any = None
    cancelled: bool = False  # set from any thread; read once per step
    # A prompt with images (runner/vision.py): where each image's stand-in tokens start in
    # ``prompt`` → (its libmtmd chunk, its length). Holding the MediaPrompt keeps the chunks.
    media: Any = None
    submitted: float = field(default_factory=time.perf_counter)

    def cancel(self) -> None:
        self.cancelled = True


@dataclass(eq=False)
class EmbedJob:
    """Token lists to embed (the runner was loaded with --embedding); one vector per list."""

    inputs: list[list[int]]
    on_done: Callable[[list[Any]], None]  # unit-length float32 numpy vectors, in input order
    on_error: ErrorSink


@dataclass
class RequestStats:
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    time_to_first_token_s: float = 0.0
    tokens_per_second: float = 0.0
    finish_reason: str = ""


@dataclass(eq=False)
class _Slot:
    seq: int
    tokens: list[int] = field(default_factory=list)  # exactly what this sequence's KV holds
    job: Job | None = None
    pending: list[int] = field(default_factory=list)  # prompt tokens still to decode
    # (With no job: the next chat turn's boundary, decoded ahead while the slot is idle.)
    sampler: Any = None
    last: int = -1  # token sampled last step, to decode this step
    n_gen: int = 0
    batch_index: int = -1
    decoder: Any = None
    held: str = ""  # text held back because it may be the start of a stop string
    t_first: float = 0.0
    n_cached: int = 0
    # Speculation: the tokens drafted this step (decoded after ``last``), what the draft
    # model's sequence holds, and the n-gram index for prompt lookup.
    drafts: list[int] = field(default_factory=list)
    dtokens: list[int] = field(default_factory=list)
    ngrams: NgramIndex | None = None


class Model:
    """A loaded model and its context. Create with :meth:`load`; use from one thread at a time."""

    def __init__(self, settings: LoadSettings, model: Any, ctx: Any, load_log: list[str]) -> None:
        self.settings = settings
        self.model = model
        self.ctx = ctx
        self.load_log = load_log
        self.vocab = llama_cpp.llama_model_get_vocab(model)
        self.n_vocab = llama_cpp.llama_vocab_n_tokens(self.vocab)
        self.n_embd = llama_cpp.llama_model_n_embd(model)
        self.n_ctx = llama_cpp.llama_n_ctx(ctx)
        self.n_ctx_train = llama_cpp.llama_model_n_ctx_train(model)
        self.memory = llama_cpp.llama_get_memory(ctx)
        self.bos = llama_cpp.llama_vocab_bos(self.vocab)
        self.eos = llama_cpp.llama_vocab_eos(self.vocab)
        self._pieces: dict[int, bytes] = {}
        self._piece_buf = ctypes.create_string_buffer(256)
        self._longest_token: int | None = None  # bytes of text one token stands for, at most
        self._longest_lock = threading.Lock()
        self.vision: Any = None  # runner.vision.Vision when a projector was loaded beside it

    # ---- loading -------------------------------------------------------------------------------

    @classmethod
    def load(
        cls,
        settings: LoadSettings,
        on_progress: Callable[[float], bool] | None = None,
    ) -> Model:
        """Load model and context. ``on_progress(p)`` returning False aborts the load."""
        llamalog.install()
        runtime.llama()  # the runtime's backends first: a GGML_BACKEND_DL build has none yet
        llama_cpp.llama_backend_init()
        if settings.rpc:
            from runner.rpc import RpcError, add_workers

            try:
                add_workers(list(settings.rpc))
            except RpcError as exc:
                raise LoadError(f"{settings.model}: {exc}") from None
        keep: list[Any] = []  # ctypes arrays the params point into, alive until the load ends
        try:
            mparams = model_params(settings, keep)
        except ParamsError as exc:
            raise LoadError(f"{settings.model}: {exc}") from None

        def progress(p: float, _user: ctypes.c_void_p) -> bool:
            return True if on_progress is None else bool(on_progress(float(p)))

        callback = llama_cpp.llama_progress_callback(progress)  # referenced until load returns
        mparams.progress_callback = callback
        with llamalog.capture() as lines:
            model = llama_cpp.llama_model_load_from_file(settings.model.encode(), mparams)
            if not model:
                raise LoadError(_load_failure(settings.model, lines), _looks_oom(lines))
            n_ctx = settings.ctx_size or llama_cpp.llama_model_n_ctx_train(model)
            cparams = context_params(settings, n_ctx, model)
            ctx = llama_cpp.llama_init_from_model(model, cparams)
            if not ctx:
                llama_cpp.llama_model_free(model)
                raise LoadError(
                    f"{settings.model}: llama.cpp could not create a context of {n_ctx} tokens: "
                    f"{last_error(lines) or 'unknown reason'}. Try a smaller context.",
                    _looks_oom(lines),
                )
            loaded = cls(settings, model, ctx, list(lines))
            if settings.mmproj:
                loaded.vision = _load_vision(loaded, settings.mmproj)
        return loaded

    @classmethod
    def load_draft(cls, settings: LoadSettings, target: Model) -> Model:
        """The draft model for speculative decoding, beside ``target``: the same context size,
        slots and KV types, on the first GPU when the target uses one (--spec-draft-ngl), as
        the app's plan counts it, not split over several."""
        from dataclasses import replace

        assert settings.draft_model
        ngl = settings.draft_ngl if settings.draft_ngl >= 0 else \
            (-1 if settings.n_gpu_layers != 0 else 0)
        threads = settings.draft_threads or settings.threads
        draft = cls.load(replace(
            settings, model=settings.draft_model, n_gpu_layers=ngl, mmproj=None, n_cpu_moe=0,
            tensor_split=(), rpc=(), ctx_size=target.n_ctx, spec_type="none", draft_model=None,
            threads=threads, threads_batch=threads, first_gpu_only=True))
        why = draft.cannot_draft_for(target)
        if why:
            draft.close()
            raise LoadError(f"{settings.draft_model} cannot draft for {settings.model}: {why}. "
                            "Use a smaller model of the same family (the same tokenizer).")
        return draft

    def cannot_draft_for(self, target: Model) -> str:
        """Why this model's tokens are not the target's, or "": llama-server's test
        (common_speculative_are_compatible), its token-by-token part on a sample of the shared
        ids. The sizes may differ a little (Qwen 2.5's 0.5B has 151,936 ids, its 32B 152,064:
        padding)."""
        if abs(self.n_vocab - target.n_vocab) > VOCAB_SIZE_SLACK:
            return f"its vocabulary has {self.n_vocab} tokens, the model's {target.n_vocab}"
        kinds = (llama_cpp.llama_vocab_type(self.vocab), llama_cpp.llama_vocab_type(target.vocab))
        if kinds[0] != kinds[1]:
            return "its tokenizer is of another kind"
        if (self.bos, self.eos) != (target.bos, target.eos):
            return "its start and end tokens differ"
        shared = min(self.n_vocab, target.n_vocab)
        for tok in range(5, shared, max(1, shared // 4096)):
            if self.token_text(tok) != target.token_text(tok):
                return f"token {tok} differs ({self.token_text(tok)[:20]!r})"
        return ""

    def close(self) -> None:
        if self.vision is not None:
            self.vision.close()
            self.vision = None
        if self.ctx:
            llama_cpp.llama_free(self.ctx)
            self.ctx = None
        if self.model:
            llama_cpp.llama_model_free(self.model)
            self.model = None

    # ---- text <-> tokens ---------------------------------------------------------------------

    def tokenize(self, text: str, add_bos: bool = True, special: bool = True,
                 context: int | None = None) -> list[int]:
        """The tokens of ``text``. Safe on any thread: it reads only the vocabulary.

        With ``context``, a text of that many tokens or more (too many for a prompt in a
        context of that size) raises ContextLengthExceeded without its
        tokens being listed (a Python list of ten million tokens holds the GIL for a second),
        and one far too long to fit is refused before llama.cpp tokenizes it (seconds per ten
        megabytes, a core the decode loop needs).
        """
        data = text.encode("utf-8", errors="replace")
        if context is not None:
            least = self.least_tokens(len(data), context)
            if least >= context:
                raise ContextLengthExceeded(least, context, at_least=True)
        n_max = len(data) + 8
        buf = (llama_cpp.llama_token * n_max)()
        n = llama_cpp.llama_tokenize(self.vocab, data, len(data), buf, n_max, add_bos, special)
        if n < 0:  # buffer too small: -n is the size needed
            n_max = -n
            buf = (llama_cpp.llama_token * n_max)()
            n = llama_cpp.llama_tokenize(self.vocab, data, len(data), buf, n_max, add_bos, special)
        if context is not None and n >= context:
            raise ContextLengthExceeded(n, context)
        return list(buf[:n])

    def least_tokens(self, n_bytes: int, context: int) -> int:
        """The fewest tokens ``n_bytes`` of text can make: no token stands for more text than
        the longest one's. Only where the tokenizer keeps every byte of the text (SentencePiece
        and byte-level BPE; WordPiece and Unigram drop whitespace), and only for a text long
        enough to be in doubt (finding the longest token reads the whole vocabulary once)."""
        if n_bytes <= 8 * context or llama_cpp.llama_vocab_type(self.vocab) not in (
                llama_cpp.LLAMA_VOCAB_TYPE_SPM, llama_cpp.LLAMA_VOCAB_TYPE_BPE):
            return 0
        with self._longest_lock:
            if self._longest_token is None:
                self._longest_token = max(
                    (len(llama_cpp.llama_vocab_get_text(self.vocab, t) or b"")
                     for t in range(self.n_vocab)), default=1)
            longest = max(self._longest_token, 1)
        return -(-n_bytes // longest)

    def piece(self, token: int) -> bytes:
        cached = self._pieces.get(token)
        if cached is None:
            n = llama_cpp.llama_token_to_piece(self.vocab, token, self._piece_buf, 256, 0, False)
            cached = self._piece_buf.raw[: max(n, 0)]
            self._pieces[token] = cached
        return cached

    def token_text(self, token: int, special: bool = True) -> str:
        """The text of a token as the vocabulary spells it (for BOS/EOS in chat templates)."""
        if token < 0:
            return ""
        n = llama_cpp.llama_token_to_piece(self.vocab, token, self._piece_buf, 256, 0, special)
        return self._piece_buf.raw[: max(n, 0)].decode("utf-8", errors="replace")

    def meta(self, key: str) -> str | None:
        buf = ctypes.create_string_buffer(1 << 20)
        n = llama_cpp.llama_model_meta_val_str(self.model, key.encode(), buf, len(buf))
        if n < 0:
            return None
        if n >= len(buf):  # longer than 1 MiB: ask again with the size it needs
            buf = ctypes.create_string_buffer(n + 1)
            llama_cpp.llama_model_meta_val_str(self.model, key.encode(), buf, len(buf))
        return buf.value.decode("utf-8", errors="replace")

    def embed(self, tokens: list[int], b: Any) -> Any:
        """One input's pooled embedding, normalised to length 1 as OpenAI's are.

        ``b`` is a llama_batch with room for every token: pooling sees the whole input at once.
        """
        import numpy as np

        llama_cpp.llama_memory_clear(self.memory, True)
        for j, tok in enumerate(tokens):
            b.token[j] = tok
            b.pos[j] = j
            b.n_seq_id[j] = 1
            b.seq_id[j][0] = 0
            b.logits[j] = 1
        b.n_tokens = len(tokens)
        encoder_only = llama_cpp.llama_model_has_encoder(self.model) and \
            not llama_cpp.llama_model_has_decoder(self.model)
        rc = (llama_cpp.llama_encode if encoder_only else llama_cpp.llama_decode)(self.ctx, b)
        if rc != 0:
            raise EngineError(f"llama.cpp could not compute the embedding (code {rc}).")
        ptr = llama_cpp.llama_get_embeddings_seq(self.ctx, 0)
        if not ptr:
            raise EngineError("llama.cpp returned no pooled embedding for this model.")
        v = np.array(np.ctypeslib.as_array(ptr, shape=(self.n_embd,)), dtype=np.float32)  # a copy
        norm = float(np.linalg.norm(v))
        return v / norm if norm > 0 else v

    def is_eog(self, token: int) -> bool:
        return bool(llama_cpp.llama_vocab_is_eog(self.vocab, token))

    # ---- sampling ----------------------------------------------------------------------------

    def make_sampler(self, s: Sampling) -> Any:
        chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
        add = llama_cpp.llama_sampler_chain_add
        if s.logit_bias:
            arr = (llama_cpp.llama_logit_bias * len(s.logit_bias))()
            for i, (tok, bias) in enumerate(s.logit_bias.items()):
                arr[i].token = tok  # type: ignore[assignment]
                arr[i].bias = bias
            add(chain, llama_cpp.llama_sampler_init_logit_bias(self.n_vocab, len(arr), arr))
        if _penalised(s):  # second in the chain: penalties_sampler relies on it
            add(chain, llama_cpp.llama_sampler_init_penalties(
                self.n_vocab, s.repeat_last_n, s.repeat_penalty, s.frequency_penalty,
                s.presence_penalty))
        if s.grammar:
            try:
                add(chain, self._grammar_sampler(s.grammar))
            except GrammarError:
                llama_cpp.llama_sampler_free(chain)
                raise
        if s.temperature <= 0:
            add(chain, llama_cpp.llama_sampler_init_greedy())
            return chain
        if s.top_k > 0:
            add(chain, llama_cpp.llama_sampler_init_top_k(s.top_k))
        if s.top_p < 1.0:
            add(chain, llama_cpp.llama_sampler_init_top_p(s.top_p, 1))
        if s.min_p > 0.0:
            add(chain, llama_cpp.llama_sampler_init_min_p(s.min_p, 1))
        add(chain, llama_cpp.llama_sampler_init_temp(s.temperature))
        seed = s.seed if s.seed >= 0 else int.from_bytes(os.urandom(4), "little")
        add(chain, llama_cpp.llama_sampler_init_dist(seed & 0xFFFFFFFF))
        return chain

    def _grammar_sampler(self, gbnf: str) -> Any:
        """llama.cpp's grammar sampler. Its parser recurses once per nested group: call this on a
        thread with a deep stack (runner.grammar.GrammarWorker), with the grammar bounded."""
        from runner.grammar import split_parse_dump

        reason = ""

        def without_dump(text: str) -> str:
            nonlocal reason
            reason, rest = split_parse_dump(text, gbnf)
            return rest

        with llamalog.capture() as lines, llamalog.stderr_captured(without_dump):
            sampler = llama_cpp.llama_sampler_init_grammar(self.vocab, gbnf.encode(), b"root")
        if sampler:
            return sampler
        reason = reason or last_error(lines) or "unknown reason"
        log.warning("llama.cpp could not parse a grammar of %d bytes: %s", len(gbnf), reason,
                    extra={"event": "grammar_refused"})
        raise GrammarError(f"llama.cpp could not parse the grammar made from this request: "
                           f"{reason}")

    @staticmethod
    def free_sampler(sampler: Any) -> None:
        """Free a chain from make_sampler that no slot took (its request went away)."""
        if sampler is not None:
            llama_cpp.llama_sampler_free(sampler)

    @staticmethod
    def penalties_sampler(chain: Any, s: Sampling) -> Any:
        """The penalties sampler inside a chain from ``make_sampler``, or None."""
        return llama_cpp.llama_sampler_chain_get(chain, 1 if s.logit_bias else 0) \
            if _penalised(s) else None


def _penalised(s: Sampling) -> bool:
    return s.repeat_penalty != 1.0 or bool(s.presence_penalty) or bool(s.frequency_penalty)


def calibration_budget() -> float:
    """Seconds the load's thread trial may take: 2, so a slow model on a slow CPU does not hold
    the load up. HEARTH_CALIBRATE_SECONDS overrides it (tests that check the whole trial on a
    busy machine give it the time it needs there)."""
    try:
        return max(0.0, float(os.environ.get("HEARTH_CALIBRATE_SECONDS", "")))
    except ValueError:
        return 2.0


class _Wake:
    """Queued to make an idle scheduler look at its work again."""


_WAKE = _Wake()


class Scheduler:
    """Owns the model's context on one thread and runs queued jobs through parallel slots."""

    def __init__(self, model: Model, draft: Model | None = None) -> None:
        self.model = model
        self.draft = draft  # the draft model (--spec-draft-model), with its own context
        st = model.settings
        self.spec: Speculation | None = None if st.spec_type == "none" else Speculation(
            st.spec_type, st.draft_n_max, st.draft_n_min, st.ngram_size_n, st.ngram_size_m)
        self.spec_counts = SpecCounts()
        self.speculating = self.spec is not None  # off once a trial showed it does not pay
        self.trial: Any = None  # spec_trial.Verdict, when --spec-measure measured at load
        self.n_slots = max(1, model.settings.parallel)
        self.slot_ctx = model.n_ctx // self.n_slots
        self.slots = [_Slot(seq=i) for i in range(self.n_slots)]
        self.queue: queue.SimpleQueue[Job | EmbedJob | _Wake | None] = queue.SimpleQueue()
        self.speed: Any = None  # runner.speed_trial.SpeedTrial, measured while idle
        self.last = RequestStats()
        self.total_requests = 0
        self.active_jobs = 0
        # The tokens a chat template puts between a reply and the next user message (ChatML:
        # "<|im_end|>\n<|im_start|>user\n"); set by the server. Decoded while the slot is idle,
        # so the next turn's time to first token pays only for what the user wrote.
        self.turn_boundary: list[int] = []
        self._stop = False
        n_batch = max(model.settings.batch_size, self.n_slots)
        self._n_batch = n_batch
        self._batch = llama_cpp.llama_batch_init(n_batch, 0, 1)
        self._dbatch = llama_cpp.llama_batch_init(n_batch, 0, 1) if draft is not None else None
        self._greedy = llama_cpp.llama_sampler_init_greedy() if draft is not None else None
        if self.spec is not None and self.spec.kind == "ngram-simple":
            for slot in self.slots:
                slot.ngrams = NgramIndex(self.spec.size_n)
        self.tuner = ThreadTuner(st.max_threads or st.threads, st.threads, st.adapt_threads,
                                 OtherLoad() if st.adapt_threads else None)
        self._threads = st.threads  # what the context runs with now
        # Called on this thread after every step (and every admission): the server hands the
        # step's text to its event loop in one go (runner/server.py Outbox).
        self.after_step: Callable[[], None] | None = None
        if self.tuner.adaptive and not st.embedding:
            # Before the scheduler thread owns the context, so the runner reports ready with
            # the count it measured (at most a couple of seconds on a slow CPU model).
            try:
                self._calibrate(calibration_budget())
            except Exception:  # a failed measurement leaves the plan's count, nothing worse
                log.exception("thread calibration failed")
        self._thread = threading.Thread(target=self._run, name="scheduler", daemon=True)
        self._thread.start()

    def submit(self, job: Job) -> None:
        if len(job.prompt) >= self.slot_ctx:
            raise ContextLengthExceeded(len(job.prompt), self.slot_ctx)
        if not job.prompt:
            raise EngineError("The prompt is empty.")
        if job.prompt[-1] < 0:  # an image's stand-in: the scheduler samples after text only
            raise EngineError("The prompt ends with an image; put text after it.")
        self.queue.put(job)

    @property
    def max_embed_tokens(self) -> int:
        # An input is one batch in one sequence: within llama.cpp's own batch (it caps it at a
        # sequence's context) and a sequence's share of the KV cache. Past either, llama_decode
        # aborts the process (GGML_ASSERT n_tokens_all <= n_batch) instead of returning an error.
        return min(self._n_batch, llama_cpp.llama_n_batch(self.model.ctx), self.slot_ctx)

    def submit_embed(self, job: EmbedJob) -> None:
        longest = max((len(t) for t in job.inputs), default=0)
        if longest > self.max_embed_tokens:
            raise ContextLengthExceeded(longest, self.max_embed_tokens)
        self.queue.put(job)

    def _embed(self, job: EmbedJob) -> None:
        try:
            vectors = [self.model.embed(tokens, self._batch) for tokens in job.inputs]
        except EngineError as exc:
            job.on_error(exc)
            return
        except Exception as exc:  # never let one bad input kill the scheduler
            log.exception("embedding failed")
            job.on_error(EngineError(f"Embedding failed: {exc}"))
            return
        self.total_requests += 1
        job.on_done(vectors)

    @property
    def stopping(self) -> bool:
        return self._stop

    def stop(self) -> None:
        """Cancel everything and end the thread (the runner is shutting down)."""
        self._stop = True
        for slot in self.slots:
            if slot.job is not None:
                slot.job.cancel()
        self.queue.put(None)
        self._thread.join(timeout=1.5)

    # ---- the loop ------------------------------------------------------------------------------

    def start_speed_trial(self, trial: Any) -> None:
        """Measure ``trial`` (runner/speed_trial.py SpeedTrial) whenever nothing else runs."""
        self.speed = trial
        self.queue.put(_WAKE)

    def _run(self) -> None:
        try:
            self._loop()
        finally:
            if self.speed is not None:
                self.speed.close()  # its context, before the model goes

    def _loop(self) -> None:
        waiting: list[Job] = []
        while not self._stop:
            busy = any(s.job is not None or s.pending for s in self.slots)
            trial = self.speed if self.speed is not None and self.speed.pending else None
            idle = not busy and not waiting
            try:
                if idle and trial is not None:  # measure unless something arrives
                    wait = trial.resume_at - time.monotonic()
                    item = self.queue.get(timeout=wait) if wait > 0 else self.queue.get_nowait()
                else:
                    item = self.queue.get(block=idle)
                while True:
                    if item is None:
                        return
                    if isinstance(item, EmbedJob):
                        self._embed(item)  # embedding runners generate nothing: no slot to share
                    elif isinstance(item, Job):
                        waiting.append(item)
                    item = self.queue.get_nowait()
            except queue.Empty:
                pass
            if trial is not None:
                if waiting or busy:
                    trial.set_aside()  # its context freed before the request runs
                elif time.monotonic() >= trial.resume_at:
                    try:
                        trial.unit(self.model, self._threads)
                    except Exception as exc:  # the trial's failure must not take the scheduler
                        log.exception("measuring the speed settings failed")
                        trial.fail(f"measuring failed: {exc}")
                    continue
            waiting = self._admit(waiting)
            if any(s.job is not None or s.pending for s in self.slots):
                try:
                    self._step()
                except Exception as exc:  # never let one bad step kill the server
                    log.exception("decode step failed")
                    self._fail_all(EngineError(f"Generation failed: {exc}"))
            if self.after_step is not None:
                self.after_step()

    def _admit(self, waiting: list[Job]) -> list[Job]:
        rest: list[Job] = []
        for job in waiting:  # FIFO: the oldest waiting job gets the first free slot
            if job.cancelled:
                self.model.free_sampler(job.sampler)
                job.sampler = None
                job.on_done("cancelled", Usage(len(job.prompt), 0, 0))
                continue
            free = [s for s in self.slots if s.job is None]
            if not free:
                rest.append(job)
                continue
            slot = max(free, key=lambda s: _slot_value(s.tokens, job.prompt))
            try:
                self._start(slot, job)
            except EngineError as exc:
                job.on_error(exc)
            except Exception as exc:  # a bug must fail this request, not the scheduler thread
                log.exception("could not start a request")
                job.on_error(EngineError(f"The request could not be started: {exc}"))
        return rest

    def _start(self, slot: _Slot, job: Job) -> None:
        m = self.model
        # A grammar's chain comes made (off this thread); made here it may refuse (bad grammar):
        # either way, before touching the KV cache.
        sampler = job.sampler if job.sampler is not None else m.make_sampler(job.sampling)
        job.sampler = None
        keep = _common_prefix(slot.tokens, job.prompt) if job.cache_prompt else 0
        if keep == len(job.prompt):
            keep -= 1  # decode at least one token so there are logits to sample from
        if job.media is not None:
            keep = _image_start(job.media.images, keep)
        if not llama_cpp.llama_memory_seq_rm(m.memory, slot.seq, keep, -1):
            llama_cpp.llama_memory_seq_rm(m.memory, slot.seq, -1, -1)
            keep = 0
        slot.sampler = sampler
        del slot.tokens[keep:]
        slot.drafts = []
        if slot.ngrams is not None:
            slot.ngrams.truncate(keep)
        slot.job = job
        slot.pending = job.prompt[keep:]
        slot.n_cached = keep
        slot.n_gen = 0
        slot.last = -1
        slot.held = ""
        slot.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.active_jobs += 1
        # Penalties look at recent tokens; prime them with the prompt as llama-server does. Only
        # the penalties sampler: a grammar in the chain would be fed the prompt, reject it, and
        # abort the process with a C++ exception.
        penalties = m.penalties_sampler(slot.sampler, job.sampling)
        if penalties is not None:
            for tok in job.prompt[-job.sampling.repeat_last_n:]:
                if tok >= 0:  # not an image's stand-in
                    llama_cpp.llama_sampler_accept(penalties, tok)

    def _step(self) -> None:
        m = self.model
        b = self._batch
        n = 0
        width = 0  # sequences that decode their last sampled token this step
        budget = self._n_batch
        for slot in self.slots:
            job = slot.job
            if job is None:
                if slot.pending:  # the next turn's boundary: no logits, nobody waits for it
                    n = self._put_pending(slot, n, budget)
                continue
            if job.cancelled:
                self._finish(slot, "cancelled")
                continue
            slot.batch_index = -1
            if slot.pending and slot.pending[0] < 0 and not self._put_image(slot, job):
                continue
            if slot.pending:
                start = n
                n = self._put_pending(slot, n, budget)
                if n == start:
                    continue
                if not slot.pending:
                    b.logits[n - 1] = 1
                    slot.batch_index = n - 1
            elif slot.last >= 0:
                width += 1
                if self.speculating:
                    n = self._put_drafted(slot, job, n, budget)
                    continue
                b.token[n] = slot.last
                b.pos[n] = len(slot.tokens)
                b.n_seq_id[n] = 1
                b.seq_id[n][0] = slot.seq
                b.logits[n] = 1
                slot.tokens.append(slot.last)
                slot.batch_index = n
                n += 1
        if n == 0:
            return
        b.n_tokens = n
        # Only generation steps (one token per sequence) compare from step to step.
        timed = n == width
        t0 = time.perf_counter()
        rc = llama_cpp.llama_decode(m.ctx, b)
        if rc != 0:
            raise EngineError(f"llama_decode returned {rc}")
        if timed:
            self._use_threads(self.tuner.observe(n, time.perf_counter() - t0))
        for slot in self.slots:
            if slot.job is not None and slot.batch_index >= 0:
                if slot.drafts:
                    self._verify(slot)
                else:
                    self._sample(slot)

    def threads_in_use(self) -> int:
        return self._threads

    def warming(self) -> int:
        """Tokens idle slots have still to decode ahead (a chat's next turn boundary). Read from
        the event loop for /runner/status: a client can wait until they are in the cache."""
        return sum(len(s.pending) for s in self.slots if s.job is None)

    def _use_threads(self, n: int) -> None:
        if n != self._threads:
            st = self.model.settings
            # Prompt chunks suffer from a busy core the same way: below the maximum they follow.
            batch = st.threads_batch if n >= self.tuner.max else n
            llama_cpp.llama_set_n_threads(self.model.ctx, n, batch)
            self._threads = n

    def _calibrate(self, budget_s: float = 2.0) -> None:
        """At load: one token at a time on an empty sequence with each candidate thread count
        (runner/threads.py), before any request is admitted; then the sequence is emptied."""
        m = self.model
        b = self._batch
        seq = self.slots[0].seq
        tok = m.bos if m.bos >= 0 else 0
        self.tuner.start_trial("model loaded")
        self._use_threads(self.tuner.current)
        deadline = time.perf_counter() + budget_s
        pos = 0
        try:
            while self.tuner.in_trial and pos < self.slot_ctx - 1:
                if time.perf_counter() > deadline:
                    self.tuner.finish_trial()
                    break
                _entry(b, 0, tok, pos, seq, 1)
                b.n_tokens = 1
                t0 = time.perf_counter()
                if llama_cpp.llama_decode(m.ctx, b) != 0:
                    self.tuner.finish_trial()
                    break
                self.tuner.observe(1, time.perf_counter() - t0)
                self._use_threads(self.tuner.current)
                pos += 1
        finally:
            llama_cpp.llama_memory_seq_rm(m.memory, seq, -1, -1)
            self._use_threads(self.tuner.current)  # a trial cut short goes back to its choice
        log.info("threads: %d of %d", self.tuner.current, self.tuner.max,
                 extra={"event": "threads", **self.tuner.status()})

    def _put_pending(self, slot: _Slot, n: int, budget: int) -> int:
        """Put as many of the slot's pending tokens as fit into the batch (without logits) after
        its first ``n`` entries; returns the new entry count."""
        b = self._batch
        take = slot.pending[: max(0, budget - n - self._generating())]
        if slot.job is not None and slot.job.media is not None:
            take = _before_image(take)
        pos = len(slot.tokens)
        for j, tok in enumerate(take):
            b.token[n + j] = tok
            b.pos[n + j] = pos + j
            b.n_seq_id[n + j] = 1
            b.seq_id[n + j][0] = slot.seq
            b.logits[n + j] = 0
        del slot.pending[: len(take)]
        slot.tokens.extend(take)
        return n + len(take)

    def _put_image(self, slot: _Slot, job: Job) -> bool:
        """Encode the image the slot's pending tokens start with and decode it into its sequence
        (libmtmd's own batches, before this step's batch: the text after it comes later).
        False: it failed, and so did the job (not the others)."""
        at = len(job.prompt) - len(slot.pending)
        chunk, n_pos = job.media.images[at]
        try:
            self.model.vision.eval(self.model.ctx, chunk, len(slot.tokens), slot.seq,
                                   self._n_batch)
        except Exception as exc:
            log.exception("image encode failed")
            self._fail(slot, job, EngineError(f"The image could not be read by the model: {exc}"))
            return False
        slot.tokens.extend(slot.pending[:n_pos])
        del slot.pending[:n_pos]
        return True

    def _generating(self) -> int:
        return sum(1 for s in self.slots if s.job is not None and not s.pending)

    def _sample(self, slot: _Slot) -> None:
        self._take(slot, llama_cpp.llama_sampler_sample(slot.sampler, self.model.ctx,
                                                        slot.batch_index))

    def _take(self, slot: _Slot, tok: int) -> bool:
        """A token sampled at ``slot.batch_index``: its text goes out, or the job ends (False)."""
        m = self.model
        job = slot.job
        assert job is not None
        if slot.n_gen == 0:
            slot.t_first = time.perf_counter()
        if not job.ignore_eos and m.is_eog(tok):
            self._finish(slot, "stop")
            return False
        slot.n_gen += 1
        if job.logprobs is not None and job.on_logprob is not None:
            self._logprob(slot, job, tok)
        text = slot.decoder.decode(m.piece(tok))
        if text:
            if job.stop:
                if self._emit_with_stops(slot, text):
                    return False
            else:
                job.on_text(text)
        if job.max_tokens is not None and slot.n_gen >= job.max_tokens:
            self._finish(slot, "length", undecoded=tok)
            return False
        if len(slot.tokens) + 1 >= self.slot_ctx:
            self._finish(slot, "length", undecoded=tok)
            return False
        slot.last = tok
        return True

    # ---- speculative decoding (runner/speculative.py) ----------------------------------------

    def _put_drafted(self, slot: _Slot, job: Job, n: int, budget: int) -> int:
        """Put the slot's last token and this step's drafts, each with logits, into the batch
        after its first ``n`` entries; returns the new entry count."""
        b = self._batch
        slot.drafts = drafts = self._drafts(slot, job, budget - n - self._generating())
        pos = len(slot.tokens)
        for j, tok in enumerate((slot.last, *drafts)):
            _entry(b, n + j, tok, pos + j, slot.seq, 1)
        slot.tokens.append(slot.last)
        slot.tokens.extend(drafts)
        slot.batch_index = n
        return n + 1 + len(drafts)

    def _drafts(self, slot: _Slot, job: Job, room: int) -> list[int]:
        spec = self.spec
        assert spec is not None
        if job.media is not None or not job.speculate:  # as llama-server: none with images
            return []
        most = min(spec.most, room, self.slot_ctx - len(slot.tokens) - 2)
        if job.max_tokens is not None:
            most = min(most, job.max_tokens - slot.n_gen - 1)
        if most <= 0:
            return []
        if slot.ngrams is not None:
            drafts = slot.ngrams.draft(slot.tokens, slot.last, most)
        elif self.draft is not None:
            drafts = self._draft_model_tokens(slot, most)
        else:
            return []
        return drafts if len(drafts) >= max(1, spec.n_min) else []

    def _draft_model_tokens(self, slot: _Slot, most: int) -> list[int]:
        """Up to ``most`` tokens the draft model predicts (greedy) after the slot's tokens and
        its last one. The draft's sequence keeps what it shares with the target's."""
        d = self.draft
        db = self._dbatch
        assert d is not None and db is not None
        seq = slot.seq
        keep = _shared_prefix(slot.dtokens, slot.tokens)
        if keep < len(slot.dtokens):
            llama_cpp.llama_memory_seq_rm(d.memory, seq, keep, -1)
            del slot.dtokens[keep:]
        feed = slot.tokens[keep:]
        feed.append(slot.last)
        pos = keep
        out: list[int] = []
        idx = 0  # the batch index of the last token fed: its logits give the first draft
        for start in range(0, len(feed), self._n_batch):
            chunk = feed[start:start + self._n_batch]
            for j, tok in enumerate(chunk):
                _entry(db, j, tok, pos + j, seq, 0)
            db.logits[len(chunk) - 1] = 1
            db.n_tokens = len(chunk)
            if llama_cpp.llama_decode(d.ctx, db) != 0:
                return self._draft_lost(slot)
            slot.dtokens.extend(chunk)
            pos += len(chunk)
            idx = len(chunk) - 1
        while True:
            tok = llama_cpp.llama_sampler_sample(self._greedy, d.ctx, idx)
            out.append(tok)
            if len(out) >= most or d.is_eog(tok):
                return out
            _entry(db, 0, tok, pos, seq, 1)
            db.n_tokens = 1
            if llama_cpp.llama_decode(d.ctx, db) != 0:
                self._draft_lost(slot)
                return out
            slot.dtokens.append(tok)
            pos += 1
            idx = 0

    def forget_trial(self, verdict: Any) -> None:
        """After the load's trial (runner/spec_trial.py), on the loading thread while nothing
        else runs: keep speculating or stop and free the draft; forget the trial's requests."""
        self.trial = verdict
        if not verdict.kept:
            self.speculating = False
            if self.draft is not None:
                draft, self.draft = self.draft, None
                draft.close()
                for slot in self.slots:
                    slot.dtokens.clear()
        self.last = RequestStats()
        self.total_requests = 0
        self.spec_counts = SpecCounts()

    def _draft_lost(self, slot: _Slot) -> list[int]:
        # A failed draft decode leaves its sequence unknown: empty it; the target goes on alone.
        assert self.draft is not None
        llama_cpp.llama_memory_seq_rm(self.draft.memory, slot.seq, -1, -1)
        slot.dtokens.clear()
        return []

    def _verify(self, slot: _Slot) -> None:
        """Sample the target at its last token and at each draft, keeping drafts while they
        match what it sampled (llama-server's rule): the same tokens as one step at a time.
        The KV cache then holds the last token and the drafts kept; the last token sampled is
        left undecoded, as after a plain step."""
        drafts = slot.drafts
        slot.drafts = []
        m = self.model
        job = slot.job
        assert job is not None
        base = len(slot.tokens) - 1 - len(drafts)  # before the last token
        first = slot.batch_index
        accepted: list[int] = []
        for i in range(len(drafts) + 1):
            tok = llama_cpp.llama_sampler_sample(slot.sampler, m.ctx, first + i)
            accepted.append(tok)
            if i == len(drafts) or tok != drafts[i] or (not job.ignore_eos and m.is_eog(tok)):
                break
        counts = self.spec_counts
        counts.steps += 1
        counts.drafted += len(drafts)
        counts.accepted += len(accepted) - 1
        counts.generated += len(accepted)
        self._keep(slot, base + len(accepted))
        for j, tok in enumerate(accepted):
            slot.batch_index = first + j  # where its logits are (logprobs)
            if not self._take(slot, tok):
                self._keep(slot, base + 1 + j)  # it ended at this token: it stays undecoded
                return

    def _keep(self, slot: _Slot, length: int) -> None:
        if length < len(slot.tokens):
            del slot.tokens[length:]
            llama_cpp.llama_memory_seq_rm(self.model.memory, slot.seq, length, -1)

    def _logprob(self, slot: _Slot, job: Job, tok: int) -> None:
        # The model's own distribution (before sampling's filters), as OpenAI and llama-server
        # report it. Only requests that ask pay for the softmax over the vocabulary.
        import numpy as np

        m = self.model
        ptr = llama_cpp.llama_get_logits_ith(m.ctx, slot.batch_index)
        x = np.ctypeslib.as_array(ptr, shape=(m.n_vocab,)).astype(np.float64)
        mx = float(x.max())
        lse = mx + float(np.log(np.exp(x - mx).sum()))
        n = min(job.logprobs or 0, m.n_vocab)
        top: list[tuple[int, float]] = []
        if n:
            idx = np.argpartition(-x, n - 1)[:n]
            idx = idx[np.argsort(-x[idx], kind="stable")]
            top = [(int(t), float(x[t]) - lse) for t in idx]
        assert job.on_logprob is not None
        job.on_logprob(tok, float(x[tok]) - lse, top)

    def _emit_with_stops(self, slot: _Slot, text: str) -> bool:
        """Emit text that cannot be part of a stop string; True when a stop string ended it."""
        job = slot.job
        assert job is not None
        buf = slot.held + text
        cut = min((i for i in (buf.find(s) for s in job.stop) if i >= 0), default=-1)
        if cut >= 0:
            if cut:
                job.on_text(buf[:cut])
            slot.held = ""
            slot.decoder = None  # nothing after the stop string is sent, not even a byte tail
            self._finish(slot, "stop", warm=False)  # the reply the client keeps ends early
            return True
        hold = max((overlap(buf, s) for s in job.stop), default=0)
        if len(buf) > hold:
            job.on_text(buf[: len(buf) - hold])
        slot.held = buf[len(buf) - hold:] if hold else ""
        return False

    def _finish(self, slot: _Slot, reason: str, undecoded: int | None = None,
                warm: bool = True) -> None:
        """End the slot's job; ``undecoded``: the last sampled token, never decoded (length)."""
        job = slot.job
        if job is None:
            return
        # Text held back as a possible stop-string start is ordinary text when generation ends
        # for another reason (EOS, length): it must reach the client.
        tail = slot.held + (slot.decoder.decode(b"", final=True) if slot.decoder else "")
        slot.held = ""
        if tail and reason != "cancelled":
            job.on_text(tail)
        now = time.perf_counter()
        gen_time = now - slot.t_first if slot.t_first else 0.0
        self.last = RequestStats(
            prompt_tokens=len(job.prompt),
            cached_tokens=slot.n_cached,
            completion_tokens=slot.n_gen,
            time_to_first_token_s=(slot.t_first - job.submitted) if slot.t_first else 0.0,
            tokens_per_second=(slot.n_gen - 1) / gen_time if slot.n_gen > 1 and gen_time else 0.0,
            finish_reason=reason,
        )
        self.total_requests += 1
        self.active_jobs -= 1
        llama_cpp.llama_sampler_free(slot.sampler)
        slot.sampler = None
        slot.job = None
        slot.pending = []
        slot.last = -1
        slot.t_first = 0.0
        if reason == "cancelled":
            log.info("generation cancelled after %d tokens", slot.n_gen,
                     extra={"event": "cancelled", "tokens": slot.n_gen})
        job.on_done(reason, Usage(len(job.prompt), slot.n_gen, slot.n_cached))
        if warm and job.warm_next_turn and reason != "cancelled" and self.turn_boundary:
            ahead = ([] if undecoded is None else [undecoded]) + self.turn_boundary
            if len(slot.tokens) + len(ahead) < self.slot_ctx:
                slot.pending = ahead  # if the chat goes on, these tokens are its next prefix

    def _fail_all(self, exc: EngineError) -> None:
        for slot in self.slots:
            job = slot.job
            if job is None:
                if slot.pending or slot.tokens:  # it may have been warming in the failed batch
                    llama_cpp.llama_memory_seq_rm(self.model.memory, slot.seq, -1, -1)
                    slot.tokens.clear()
                    slot.pending = []
                continue
            self._fail(slot, job, exc)

    def _fail(self, slot: _Slot, job: Job, exc: EngineError) -> None:
        """End one job with an error; its sequence is emptied (what it holds is unknown)."""
        llama_cpp.llama_memory_seq_rm(self.model.memory, slot.seq, -1, -1)
        slot.tokens.clear()
        if self.draft is not None:
            self._draft_lost(slot)
        if slot.sampler is not None:
            llama_cpp.llama_sampler_free(slot.sampler)
        slot.sampler = None
        slot.job = None
        slot.pending = []
        self.active_jobs -= 1
        job.on_error(exc)


def _load_vision(m: Model, path: str) -> Any:
    from runner.vision import Vision

    problem = runtime.mtmd_available()  # before mtmd_cpp is imported: it would abort the load
    if problem is not None:
        m.close()
        raise LoadError(f"{path} cannot be loaded: {problem}")
    st = m.settings
    try:
        return Vision.load(path, m.model, st.threads, st.n_gpu_layers != 0, st.ubatch_size,
                           FLASH_ATTN[st.flash_attn])
    except ValueError as exc:
        m.close()
        raise LoadError(str(exc)) from None


def _slot_value(cached: list[int], prompt: list[int]) -> int:
    """How good a free slot is for a prompt: the tokens it reuses minus the cached tokens it
    throws away. A chat continuing in its own slot scores its whole history; a new chat scores
    best in an empty slot rather than in one whose long conversation shares only the template's
    first tokens (which would make that conversation decode its history again next turn)."""
    keep = _common_prefix(cached, prompt)
    return keep - (len(cached) - keep)


def _image_start(images: dict[int, tuple[Any, int]], keep: int) -> int:
    """``keep`` moved back to the start of the image it falls inside, if any: an image is
    decoded whole or not at all."""
    for start, (_chunk, n_pos) in images.items():
        if start < keep < start + n_pos:
            return start
    return keep


def _before_image(take: list[int]) -> list[int]:
    for i, tok in enumerate(take):
        if tok < 0:
            return take[:i]
    return take


def _entry(b: Any, i: int, tok: int, pos: int, seq: int, logits: int) -> None:
    """Batch entry ``i``: ``tok`` at ``pos`` of sequence ``seq``, with logits or not. (The
    per-token loops of a plain step write the fields inline: a call each costs there.)"""
    b.token[i] = tok
    b.pos[i] = pos
    b.n_seq_id[i] = 1
    b.seq_id[i][0] = seq
    b.logits[i] = logits


def _shared_prefix(a: list[int], b: list[int]) -> int:
    """As :func:`_common_prefix`, by slice comparisons (in C): once per speculative step on
    lists that differ, if at all, near their ends."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n - 1  # the prefix is at least lo and at most hi long
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _looks_oom(lines: list[str]) -> bool:
    text = "\n".join(lines).lower()
    return "out of memory" in text or "failed to allocate" in text or "unable to allocate" in text


def _load_failure(path: str, lines: list[str]) -> str:
    reason = last_error(lines)
    if _looks_oom(lines):
        return (f"{path}: not enough memory to load this model ({reason}). Offload fewer layers "
                "to the GPU, use a smaller context or a smaller quantization.")
    return f"{path}: llama.cpp could not load this model: {reason or 'unknown reason'}"


def system_info() -> str:
    return bytes(llama_cpp.llama_print_system_info()).decode(errors="replace").strip()


def build_info() -> dict[str, Any]:
    """What this runner build is, for /runner/status."""
    runtime.llama()  # a GGML_BACKEND_DL runtime knows its GPU support once its backends load
    return {
        "llama_cpp_python": getattr(llama_cpp, "__version__", "unknown"),
        "gpu_offload": bool(llama_cpp.llama_supports_gpu_offload()),
        "system_info": system_info(),
        "runtime": runtime.chosen(),
        "cpu_variant": runtime.cpu_variant(),
    }
