"""Forms a person answers the engine's questions with (ipywidgets): one per decision kind, registered in
:mod:`ffbench_lib.forms.base`; importing this package registers them all."""
from . import draft, ir, lineup, trades, waivers
from .base import FORMS, Form, GenericForm, form, form_for

__all__ = ["FORMS", "Form", "GenericForm", "form", "form_for", "draft", "ir", "lineup", "trades", "waivers"]
