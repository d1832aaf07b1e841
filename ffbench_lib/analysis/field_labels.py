"""How the tables of a field batch's run name its baseline teams' agents (``field:<agent>``): shared by the run
loader (:mod:`.metrics`, which relabels a field run's tables as it loads them) and :mod:`.field`."""
from __future__ import annotations

import pandas as pd

#: how tables name the agents of a field batch's baseline teams (every team but the seat): ``field:bot:adp``. The
#: baseline bots are often the same bots as the candidates; under one name a candidate's 10 seat-seasons would be
#: pooled with the 90 baseline seasons of its namesake (and 40 leagues of 10 seeds counted as 40 independent runs).
FIELD_PREFIX = "field:"
#: (table, team column, agent column) of every table that names a team's agent
AGENT_COLUMNS = (("trades", "proposer", "proposer_agent"), ("trades", "receiver", "receiver_agent"),
                 ("trade_steps", "actor", "agent"))


def relabel(tables: dict[str, pd.DataFrame], seat: str) -> dict[str, pd.DataFrame]:
    """One field run's tables with every team but the seat playing as ``field:<agent>`` (see
    :data:`FIELD_PREFIX`); tables without agents are returned as they are."""
    out = {}
    special = {t for t, _, _ in AGENT_COLUMNS}
    for name, df in tables.items():
        pairs = [(tc, ac) for t, tc, ac in AGENT_COLUMNS if t == name] if name in special else [("team", "agent")]
        df = df.copy() if any(tc in df.columns and ac in df.columns for tc, ac in pairs) else df
        for tc, ac in pairs:
            if tc in df.columns and ac in df.columns and len(df):
                base = df[tc] != seat
                df.loc[base, ac] = FIELD_PREFIX + df.loc[base, ac].astype(str)
        out[name] = df
    return out


def is_field_agent(agent) -> bool:
    """A field batch's baseline team (not a candidate): ``field:bot:adp``."""
    return str(agent).startswith(FIELD_PREFIX)


def short(agent: str) -> str:
    """Axis label for an agent id: drop the 'llm:'/'bot:' kind and a provider prefix. A field batch's baseline
    teams keep their mark (``field:bot:adp`` -> ``field: adp``): they must not read as the candidate ``adp``."""
    if agent.startswith(FIELD_PREFIX):
        return f"field: {short(agent.removeprefix(FIELD_PREFIX))}"
    return agent.split(":", 1)[-1].split("/")[-1]
