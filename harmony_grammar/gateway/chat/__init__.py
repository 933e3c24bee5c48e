"""Chat Completions: :mod:`.protocol` reads and plans a body, :mod:`.serving` runs and
answers it."""
