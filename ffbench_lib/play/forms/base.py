"""What a human's form for one decision kind declares, and the registry.

A form turns one question (a decision kind and the view the team sees) into ipywidgets and back into an answer
of the kind's shape. Legality is never re-implemented here: :meth:`Form.problems` asks the decision registry's
``validate`` (the rule the engine judges with), so the live validation line shows exactly what the engine would
repair. A kind without a registered form gets :class:`GenericForm` (the answer as JSON), so every decision kind is
playable the day it is registered.
"""
from __future__ import annotations

import functools
import html
import json
from typing import Any, Callable, ClassVar

from ffbench_lib.game.decisions.base import REGISTRY

#: CSS classes on the widgets, for people styling the desk and for the browser test (keep these names stable)
DESK, QUESTION, STATUS, PROBLEMS, SUBMIT = "ffbench-desk", "ffbench-question", "ffbench-status", "ffbench-problems", \
    "ffbench-submit"


def error_text(e: Exception) -> str:
    """How a form callback's exception reads where the person looks."""
    return f"error: {type(e).__name__}: {e}"


class Form:
    """One question's widgets. Subclasses set ``kinds``, build their controls in :meth:`build` and return the
    answer (without ``rationale``: the shared "why" field adds it) from :meth:`value`. Every widget callback is
    registered with :meth:`on_click` / :meth:`observe` (also for widgets made later), so its errors are seen."""

    kinds: ClassVar[tuple[str, ...]] = ()

    def __init__(self, kind: str, view: dict, on_submit: Callable[[dict], None] | None = None):
        import ipywidgets as w

        self.kind, self.view, self.on_submit = kind, view, on_submit
        #: where an exception of one of the form's callbacks goes (the desk sets its status line)
        self.on_error: Callable[[Exception], None] = self.show_error
        self.built = False  # until the form stands, a callback's exception is raised (the form failed)
        self.why = w.Text(placeholder="why (optional, logged as the rationale)",
                          layout=w.Layout(width="min(100%, 44em)"))
        self.problems_line = w.HTML().add_class(PROBLEMS)
        self.submit = w.Button(description=self.submit_label, button_style="primary").add_class(SUBMIT)
        self.on_click(self.submit, lambda _: self.send())
        controls = self.build()
        self.widget = w.VBox([controls, self.why, w.HBox([self.submit, self.problems_line])])
        self.refresh()
        self.built = True

    submit_label: ClassVar[str] = "Submit"

    # --- callbacks: every one goes through these two, widgets made later (a claim row, a picker) included -----
    def guarded(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` as a widget callback: once the form stands, its exception goes to :attr:`on_error` instead of
        the kernel's log, where nobody playing looks."""
        @functools.wraps(fn)
        def call(*args: Any) -> Any:
            try:
                return fn(*args)
            except Exception as e:  # noqa: BLE001 - shown to the person, who can act on it
                if not self.built:
                    raise
                self.on_error(e)
        return call

    def on_click(self, button, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``button.on_click(fn)``, guarded; returns the registered callback."""
        call = self.guarded(fn)
        button.on_click(call)
        return call

    def observe(self, widget, fn: Callable[..., Any], names: str = "value") -> Callable[..., Any]:
        """``widget.observe(fn, names)``, guarded; returns the registered callback (for ``unobserve``)."""
        call = self.guarded(fn)
        widget.observe(call, names=names)
        return call

    def show_error(self, e: Exception) -> None:
        """The default :attr:`on_error`: the error in the form's problems line."""
        self.problems_line.value = f"<span style='color:#b00020'>{html.escape(error_text(e))}</span>"

    def build(self):  # pragma: no cover - every form defines it
        """The form's controls (one widget); call :meth:`refresh` from their observers."""
        raise NotImplementedError

    def value(self) -> dict:  # pragma: no cover - every form defines it
        """The answer as the controls stand, in the kind's Answer shape."""
        raise NotImplementedError

    def answer(self) -> dict:
        ans = dict(self.value())
        if self.why.value.strip():
            ans["rationale"] = self.why.value.strip()
        return ans

    def problems(self) -> list[str]:
        """What the engine would find wrong with the answer now (empty: legal)."""
        try:
            ans = self.answer()
        except ValueError as e:  # a control that cannot be read (GenericForm's JSON)
            return [str(e)]
        return REGISTRY[self.kind].validate(ans, self.view)

    def refresh(self, *_: Any) -> list[str]:
        """Show the live validation line; Submit is disabled while the answer has problems."""
        found = self.problems()
        self.submit.disabled = bool(found)
        self.problems_line.value = ("" if not found else
                                    "<span style='color:#b00020'>" + "<br>".join(html.escape(p) for p in found)
                                    + "</span>")
        return found

    def send(self) -> None:
        if self.refresh():
            return
        if self.on_submit is not None:
            self.on_submit(self.answer())


FORMS: dict[str, type[Form]] = {}


def form(cls: type[Form]) -> type[Form]:
    """Register ``cls`` for each of its ``kinds`` (a kind has at most one form)."""
    for kind in cls.kinds:
        if kind in FORMS:
            raise ValueError(f"decision kind {kind!r} has two forms: {FORMS[kind].__name__} and {cls.__name__}")
        if kind not in REGISTRY:
            raise ValueError(f"form {cls.__name__} names {kind!r}, which is not a registered decision kind")
        FORMS[kind] = cls
    return cls


class GenericForm(Form):
    """Any decision kind: its answer as JSON, prefilled with the keys its Answer model declares."""

    def build(self):
        import ipywidgets as w

        model = REGISTRY[self.kind].Answer
        blank = {name: _blank(f.annotation) for name, f in model.model_fields.items() if name != "rationale"}
        self.text = w.Textarea(value=json.dumps(blank, indent=1), layout=w.Layout(width="100%", height="10em"))
        self.observe(self.text, self.refresh)
        return self.text

    def value(self) -> dict:
        try:
            ans = json.loads(self.text.value)
        except ValueError as e:
            raise ValueError(f"not JSON: {e}") from None
        if not isinstance(ans, dict):
            raise ValueError("the answer is a JSON object: {...}")
        return ans


def _blank(annotation: Any) -> Any:
    text = str(annotation)
    return [] if text.startswith("list") else {} if text.startswith("dict") else None


def form_for(kind: str, view: dict, on_submit: Callable[[dict], None] | None = None) -> Form:
    """The registered form for ``kind`` (its module imported by :mod:`ffbench_lib.play.forms`), else a GenericForm."""
    return FORMS.get(kind, GenericForm)(kind, view, on_submit)
