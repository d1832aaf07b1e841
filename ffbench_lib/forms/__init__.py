"""Forms a person answers the engine's questions with (ipywidgets): one per decision kind, registered in
:mod:`ffbench_lib.forms.base`; importing this package registers them all."""
from .base import FORMS, Form, GenericForm, form, form_for  # noqa: F401
from . import draft  # noqa: F401
from . import lineup, waivers, trades, ir  # noqa: F401
