"""A GGUF's chat template, rendered as the untrusted code it is.

The template comes from a downloaded file. Jinja's sandbox keeps it from the file system and
Python's internals, but not from time or memory: three nested ``range(100000)`` loops never end,
``'x' * 10**10`` asks for 10 GB in one step, and a loop that writes each message 100,000 times
turns a kilobyte into 100 MB of prompt for the tokenizer. So a render here

- is stopped after ``max_seconds`` (:func:`run_with_deadline`: an exception raised in the
  rendering thread between two bytecodes, and raised again if something swallowed it, which
  reaches loops that make no calls as well);
- is stopped once it has written more than ``max_chars`` characters (the template's output is
  taken piece by piece, not joined whole first);
- refuses, before they run, the single steps that would make a value over ``max_chars`` at once
  (``*`` and ``+`` on strings and lists, ``**`` on numbers, any call or filter given a count
  over the limit, such as ``center`` or ``ljust``): no deadline can interrupt one step of C.

Renders run off the event loop (the server's prompt threads) or on the loader thread.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment
from llama_cpp.llama_chat_format import ChatFormatterResponse, Jinja2ChatFormatter

from runner.limits import FLAGS

log = logging.getLogger(__name__)

T = TypeVar("T")

# A number in a template is a count, an index or a date; none needs more digits than this.
MAX_NUMBER_BITS = 64 * 1024


class TemplateRefused(Exception):
    """The render went over a limit; ``str()`` says which and the flag that raises it.
    ``code`` is the API error code."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


class _Expired(BaseException):
    """Raised inside the rendering thread at its deadline (a BaseException, so that no
    ``except Exception`` in Jinja's own code can swallow it)."""


def run_with_deadline(fn: Callable[[], T], seconds: float, expired: Callable[[], Exception]) -> T:
    """``fn()`` on this thread, stopped after ``seconds`` by ``expired()``.

    A watcher thread asks CPython to raise an exception in this one at its next bytecode
    (``PyThreadState_SetAsyncExc``), so Python code that loops without calling anything is
    stopped as well; one long step in C runs to its end first. The exception can land in code
    that swallows it (a garbage-collector callback, a ``__del__``: CPython reports those as
    "unraisable" and goes on), so the watcher raises it again every ``_REFIRE_SECONDS`` until
    ``fn`` has stopped. The lock makes sure that it lands only while ``fn`` runs, or is taken
    back before this returns.
    """
    tid = threading.get_ident()
    lock = threading.Lock()
    done = threading.Event()
    running, fired = [True], [False]

    def watch() -> None:
        wait = seconds
        while not done.wait(wait):
            with lock:
                if not running[0]:
                    return
                fired[0] = True
                _async_raise(tid, _Expired)
            wait = _REFIRE_SECONDS

    def disarm() -> None:
        # Idempotent; a pending exception landing while it runs only makes it run again.
        while True:
            try:
                with lock:
                    running[0] = False
                    if fired[0]:
                        _async_raise(tid, None)  # one still pending is taken back
                done.set()
                return
            except _Expired:
                continue

    watcher = threading.Thread(target=watch, name="deadline", daemon=True)
    try:
        try:
            watcher.start()
            return fn()
        finally:
            disarm()
    except _Expired:
        # Landed after fn or before disarm's guard: the watcher fires at most once per
        # _REFIRE_SECONDS, so this second disarm finishes before another can come.
        disarm()
        raise expired() from None


# How often an exception that was swallowed is raised again.
_REFIRE_SECONDS = 0.05


def _async_raise(tid: int, exc: type[BaseException] | None) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(tid), ctypes.py_object(exc) if exc is not None else None)


class BoundedSandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox that refuses one-step values over ``max_chars``."""

    intercepted_binops = frozenset(["*", "+", "**"])

    def __init__(self, max_chars: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.max_chars = max_chars

    def call_binop(self, context: Any, operator_: str, left: Any, right: Any) -> Any:
        if operator_ == "**":
            self._check_power(left, right)
        elif operator_ == "*":
            self._check_size(_product_size(left, right))
        elif operator_ == "+":
            self._check_size(_sum_size(left, right))
        return super().call_binop(context, operator_, left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        __self.check_counts(args, kwargs)
        return super().call(__context, __obj, *args, **kwargs)

    def check_counts(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """A call given a number over the limit (``'x'.ljust(10**10)``) would make a value
        that large in one step of C."""
        for value in (*args, *kwargs.values()):
            if isinstance(value, int) and not isinstance(value, bool) and \
                    abs(value) > self.max_chars:
                self._refuse(f"a call with the count {value}")

    def bound_filters(self) -> None:
        """Every filter checks its counts too (``'x' | center(10**10)``); filters are looked up
        when a template is compiled, so call this before compiling."""
        for name, fn in list(self.filters.items()):
            self.filters[name] = self._checked_filter(fn)

    def _checked_filter(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)  # keeps jinja_pass_arg (pass_context and the like)
        def checked(*args: Any, **kwargs: Any) -> Any:
            self.check_counts(args, kwargs)
            return fn(*args, **kwargs)

        return checked

    def _check_size(self, size: int | None) -> None:
        if size is not None and size > self.max_chars:
            self._refuse(f"a value of {size:,} items")

    def _check_power(self, base: Any, exponent: Any) -> None:
        if isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and \
                abs(base) > 1 and abs(base).bit_length() * exponent > MAX_NUMBER_BITS:
            self._refuse(f"the number {base} ** {exponent}")

    def _refuse(self, what: str) -> None:
        raise TemplateRefused(
            f"The model's chat template tried to make {what} in one step, over this runner's "
            f"limit of {self.max_chars // 2**20} MiB of prompt ({FLAGS['max_prompt_mib']}). "
            "The template in this model file is faulty or hostile: use another file, or give "
            "the runner a template of its own.", "prompt_too_large")


def _size(value: Any) -> int | None:
    return len(value) if isinstance(value, str | bytes | list | tuple) else None


def _product_size(left: Any, right: Any) -> int | None:
    for seq, count in ((left, right), (right, left)):
        n = _size(seq)
        if n is not None and isinstance(count, int) and not isinstance(count, bool):
            return n * max(count, 0)
    return None


def _sum_size(left: Any, right: Any) -> int | None:
    a, b = _size(left), _size(right)
    return a + b if a is not None and b is not None else None


class BoundedChatFormatter:
    """Renders chat prompts as ``Jinja2ChatFormatter`` does (same variables, filters and
    extensions, so templates behave the same), within ``max_seconds`` and ``max_chars``.

    Called like it: ``formatter(messages=..., tools=..., tool_choice=...).prompt``. Raises
    :class:`TemplateRefused` over a limit; any other exception is the template's own error.
    """

    def __init__(self, template: str, eos_token: str, bos_token: str, *, max_seconds: float,
                 max_chars: int) -> None:
        self.eos_token = eos_token
        self.bos_token = bos_token
        self.max_seconds = max_seconds
        self.max_chars = max_chars
        env = BoundedSandbox(
            max_chars, loader=jinja2.BaseLoader(), trim_blocks=True, lstrip_blocks=True,
            extensions=[Jinja2ChatFormatter.IgnoreGenerationTags, jinja2.ext.loopcontrols])
        env.filters["tojson"] = Jinja2ChatFormatter.tojson
        env.bound_filters()
        self._template = env.from_string(template)

    def __call__(self, *, messages: list[dict[str, Any]], tools: Any = None,
                 tool_choice: Any = None, **kwargs: Any) -> ChatFormatterResponse:
        def raise_exception(message: str) -> None:
            raise ValueError(message)

        variables = dict(messages=messages, eos_token=self.eos_token, bos_token=self.bos_token,
                         raise_exception=raise_exception, add_generation_prompt=True,
                         functions=None, function_call=None, tools=tools,
                         tool_choice=tool_choice, strftime_now=Jinja2ChatFormatter.strftime_now,
                         **kwargs)
        prompt = run_with_deadline(lambda: self._render(variables), self.max_seconds,
                                   self._too_slow)
        return ChatFormatterResponse(prompt=prompt, stop=[self.eos_token], added_special=True)

    def _render(self, variables: dict[str, Any]) -> str:
        pieces: list[str] = []
        total = 0
        for piece in self._template.generate(**variables):
            total += len(piece)
            if total > self.max_chars:
                raise TemplateRefused(
                    f"The model's chat template made more than {self.max_chars // 2**20} MiB of "
                    f"prompt from this request, this runner's limit ({FLAGS['max_prompt_mib']}). "
                    "Send less text, or raise the limit.", "prompt_too_large")
            pieces.append(piece)
        return "".join(pieces)

    def _too_slow(self) -> TemplateRefused:
        return TemplateRefused(
            f"The model's chat template took longer than this runner's limit of "
            f"{self.max_seconds:g} s ({FLAGS['max_template_seconds']}) to render this "
            "request. Send fewer or shorter messages; a template that is slow for every "
            "request is faulty: use another model file.", "template_too_slow")

