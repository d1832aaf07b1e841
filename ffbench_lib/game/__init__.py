"""The game: league state, what can be known when (knowledge, the views of the information firewall, masking),
rendering, the rules, the decision kinds, the phases and the season loop. Reads ``core``, ``sport``, ``config`` and
the prepared season's type from ``data``; it never knows who plays a team (agents) or where a run is kept (runs)."""
