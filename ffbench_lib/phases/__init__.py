"""The season's phases, each a small module the engine's season loop calls in turn: the draft, a trade
window, a week's lineups and scoring (and, from issue 11 on, waivers). A phase asks agents through the engine
(``engine.ask``), judges every answer with its decision type (:mod:`ffbench_lib.decisions`) and records rows
through the run's :class:`~ffbench_lib.recorder.RunRecorder` (``engine.rec``)."""
