"""The records a run writes and analysis reads: the contract between the game (the writer) and analysis (the
reader), like inspect_ai's ``log/``.

=================  ===========================================================================
:mod:`.run`        ``run.json``: :class:`~.run.RunMeta`, versioned by its ``format``
:mod:`.decision`   one ``decisions.jsonl`` line: :class:`~.decision.DecisionLine`, ``is_decision``
:mod:`.tables`     the parquet tables' schemas (``COLUMNS``, ``TABLES``, ``table_frame``)
:mod:`.probe`      the knowledge probe's ``probe.json``
:mod:`.field`      a field batch's ``field.json`` and where its runs are
:mod:`.load`       the one read-only way to read a run directory
=================  ===========================================================================

Layer: imports only ``core``, ``sport`` and ``config`` (never game, agents, llm, runs or analysis), so that the
game, the runs and analysis can all import it.
"""
