"""One ``decisions.jsonl`` line: a decision as the game recorded it (``game.recorder.RunRecorder.decision``
builds it; ``RunDir.append`` checks it against :class:`DecisionLine` and writes the same dict, so the bytes do
not depend on this model), and which lines count as a decision of the agent's own (:func:`is_decision`)."""
from __future__ import annotations

from typing import Any, Mapping

from pydantic import BaseModel, ConfigDict, Field


class DecisionLine(BaseModel):
    """A decisions.jsonl line. Kind-specific keys (``negotiation``, ``queue``, ``queue_position``, ``on_deck``,
    ``queue_dry``) are declared; any other extra key is kept as written (``extra="allow"``)."""

    model_config = ConfigDict(extra="allow")

    run_id: str
    season: int
    week: int | None = Field(description="the week decided (None in the draft)")
    pick: int | None = Field(description="the overall draft pick (draft decisions)")
    step: int | None = Field(description="a trade negotiation's step")
    team: str
    agent: str = Field(description="the team's agent id")
    decision: str = Field(description="the decision kind (draft_pick, set_lineup, propose_trade, ...)")
    view_hash: str | None = Field(description="SHA-256 of the view (None for an imported prompt)")
    view: Any = Field(description="exactly what the agent was shown")
    raw_answer: Any = Field(description="the agent's answer as given")
    applied: Any = Field(description="what the engine applied (``superseded``: an opening proposal made moot)")
    decided_by: str = Field(description="agent, or fallback when the engine repaired the answer")
    reason: str | None = Field(description="why the answer was repaired or noted ('; '-joined problems)")
    negotiation: str | None = Field(None, description="trades: the negotiation id (w<week>-n<k>)")
    queue: list[Any] | None = Field(None, description="draft queues: the queue as answered")
    queue_position: int | None = Field(None, description="draft queues: the queue entry taken")
    on_deck: bool | None = Field(None, description="an on-deck shortlist asked before the team's pick")
    queue_dry: bool | None = Field(None, description="a queue whose players were all taken: asked again")


def is_decision(record: Mapping[str, Any]) -> bool:
    """Whether a decisions.jsonl record is a decision of its own for fallback rates (the run's fallback guard and
    the metrics'): not an opening proposal superseded by an earlier trade, nor an on-deck shortlist or a valid draft
    queue asked again because its players were taken meanwhile (none was the agent's to get right or wrong). A
    dry queue the engine repaired counts: the invalid answer was the agent's, whatever the re-ask gives."""
    dry_valid = record.get("queue_dry") and record.get("decided_by") == "agent"
    return str(record.get("applied")) != "superseded" and not record.get("on_deck") and not dry_valid
