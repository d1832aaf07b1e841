"""Data: the sources (:mod:`.sources`: nflverse, SportsData.io), their checks, and the prepared season
(:mod:`.prepare` builds it; :mod:`.prepared` is its type, which the game reads without loading any reader).

Nothing is imported here, so importing one module of this package loads only what that module needs."""
