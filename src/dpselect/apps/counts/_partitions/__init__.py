"""Partition selection: releasing keys from a domain nobody can list (the private set union), and the top-k keys."""
