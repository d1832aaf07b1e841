"""A person's seat in a league, played in JupyterLab: the session, the desk and its forms."""
