"""Forms a person answers the engine's questions with (ipywidgets): one per decision kind, registered in
:mod:`ffbench_lib.play.forms.base`; importing this package registers them all."""
from ffbench_lib.play.forms import draft, ir, lineup, trades, waivers
from ffbench_lib.play.forms.base import FORMS, Form, GenericForm, form, form_for

__all__ = ["FORMS", "Form", "GenericForm", "form", "form_for", "draft", "ir", "lineup", "trades", "waivers"]
