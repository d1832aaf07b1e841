"""ffbench inside inspect_ai (the ``inspect`` extra: ``pip install ffbench[inspect]``): the tasks ``ffbench/exam`` and
``ffbench/season`` (:mod:`ffbench.tasks`, registered through inspect's ``inspect_ai`` entry point) and the adapter
that lets an inspect model or agent play an ffbench seat (:mod:`ffbench.seat`). The engine is :mod:`ffbench_lib`,
which never imports inspect; this package imports it."""
