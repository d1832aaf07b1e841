"""The sport a league is played in: its scoring presets and (``nfl``) its facts. Reads only ``core``."""
