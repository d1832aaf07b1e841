"""The game's rules: legal actions, validation, repair and apply. Agents never touch these tables; the engine
validates every answer here before anything changes."""
