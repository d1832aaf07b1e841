"""Decision types as data: one module per kind, each registered in :data:`REGISTRY` (see :mod:`.base`).

Adding a decision type = one module here (its view and ``view_schema``, answer model, ``validate`` and ``resolve``:
the legal part of an answer and the repair of the rest, prompt fields, the ``tables`` it is recorded in), its prompt
template, its bot policies, the fake server's answer and tests; :func:`ffbench_lib.testing.conformance.check_kind`
names whatever is missing. The engine, the LLM agent and the bots look kinds up here."""
import importlib
import pkgutil

from ffbench_lib.game.decisions.base import REGISTRY, Decision, Outcome, market_from_view, register, roster_from_rules

for _m in pkgutil.iter_modules(__path__):  # every module of this package registers its kinds on import
    if not _m.name.startswith("_") and _m.name != "base":
        importlib.import_module(f"{__name__}.{_m.name}")

#: the registered kinds, in a stable order (registration follows module names)
KINDS = tuple(REGISTRY)

__all__ = ["REGISTRY", "KINDS", "Decision", "Outcome", "register", "roster_from_rules", "market_from_view"]
