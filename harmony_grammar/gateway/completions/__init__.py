"""The vLLM-style ``/v1/completions``: :mod:`.protocol` reads and plans a body, :mod:`.serving`
runs and answers it."""
