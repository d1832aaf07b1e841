"""The foundation every layer may use and which uses nothing of ffbench: atomic writes, secrets (masking keys in
everything written), settings (environment variables) and paths (the project root and its folders)."""
