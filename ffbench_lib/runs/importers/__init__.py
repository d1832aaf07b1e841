"""Importers that turn runs recorded by other tools into ffbench run directories."""
